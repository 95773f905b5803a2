'use strict';

// All configuration comes from the environment. Values are read once at start-up
// and frozen, so a typo in a variable name fails loudly instead of at request time.

const path = require('path');

function required(name) {
  const value = process.env[name];
  if (!value || !value.trim()) {
    throw new Error(`Missing required environment variable ${name}`);
  }
  return value.trim();
}

function integer(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number.parseInt(raw, 10);
  if (!Number.isFinite(value) || value < 0) {
    throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  }
  return value;
}

function list(name) {
  return (process.env[name] || '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

function loadConfig() {
  const env = process.env.NODE_ENV || 'development';
  return Object.freeze({
    env,
    isProduction: env === 'production',
    port: integer('PORT', 3000),
    logLevel: process.env.LOG_LEVEL || (env === 'production' ? 'info' : 'debug'),
    slack: Object.freeze({
      signingSecret: required('SLACK_SIGNING_SECRET'),
      botToken: process.env.SLACK_BOT_TOKEN || '',
      // Slack recommends rejecting requests older than five minutes.
      maxRequestAgeSeconds: integer('SLACK_MAX_REQUEST_AGE', 300),
    }),
    github: Object.freeze({
      webhookSecret: required('GITHUB_WEBHOOK_SECRET'),
      deployBranch: process.env.DEPLOY_BRANCH || 'main',
    }),
    deploy: Object.freeze({
      directory: process.env.DEPLOY_DIR || path.resolve(__dirname, '..'),
      serviceName: process.env.SERVICE_NAME || 'slackzilla',
      script: process.env.DEPLOY_SCRIPT || path.resolve(__dirname, '..', 'scripts', 'deploy.sh'),
    }),
    adminUserIds: Object.freeze(list('ADMIN_USER_IDS')),
    rateLimitPerMinute: integer('RATE_LIMIT_PER_MINUTE', 20),
    commandTimeoutMs: integer('COMMAND_TIMEOUT_MS', 2500),
    metricsFile: process.env.METRICS_FILE || path.resolve(__dirname, '..', 'data', 'metrics.json'),
  });
}

module.exports = { loadConfig, required, integer, list };
