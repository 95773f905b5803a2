'use strict';

// Request authenticity checks for the two parties allowed to call us:
// Slack (slash commands, events, interactions) and GitHub (the deploy webhook).
// Both sign the raw request body with a shared secret using HMAC-SHA256.

const crypto = require('crypto');

const SLACK_VERSION = 'v0';
const DEFAULT_MAX_AGE_SECONDS = 60 * 5;

// Constant-time comparison; timingSafeEqual throws on length mismatch,
// so lengths are compared first (leaking only the length, which is public).
function safeEqual(a, b) {
  const left = Buffer.from(String(a), 'utf8');
  const right = Buffer.from(String(b), 'utf8');
  if (left.length !== right.length) return false;
  return crypto.timingSafeEqual(left, right);
}

function slackSignature(secret, timestamp, rawBody) {
  const base = `${SLACK_VERSION}:${timestamp}:${rawBody}`;
  const digest = crypto.createHmac('sha256', secret).update(base).digest('hex');
  return `${SLACK_VERSION}=${digest}`;
}

/**
 * Verify a request from Slack.
 *
 * Returns { ok: true } or { ok: false, reason } so callers can log why a request
 * was refused without leaking it to the client.
 */
function verifySlackSignature({ secret, timestamp, signature, rawBody, now = Date.now(), maxAgeSeconds = DEFAULT_MAX_AGE_SECONDS }) {
  if (!secret) return { ok: false, reason: 'signing secret not configured' };
  if (!timestamp || !signature) return { ok: false, reason: 'missing signature headers' };

  const sentAt = Number(timestamp);
  if (!Number.isInteger(sentAt)) return { ok: false, reason: 'malformed timestamp' };

  // Replay protection: a captured request cannot be re-sent after the window closes.
  const ageSeconds = Math.abs(Math.floor(now / 1000) - sentAt);
  if (ageSeconds > maxAgeSeconds) {
    return { ok: false, reason: `stale request (${ageSeconds}s old)` };
  }

  const expected = slackSignature(secret, timestamp, rawBody || '');
  if (!safeEqual(expected, signature)) return { ok: false, reason: 'signature mismatch' };
  return { ok: true };
}

/**
 * Verify the X-Hub-Signature-256 header GitHub sends with every webhook delivery.
 * The header looks like "sha256=<hex digest of the raw body>".
 */
function verifyGithubSignature({ secret, signatureHeader, rawBody }) {
  if (!secret) return { ok: false, reason: 'webhook secret not configured' };
  if (!signatureHeader || !signatureHeader.startsWith('sha256=')) {
    return { ok: false, reason: 'missing or unsupported signature header' };
  }
  const digest = crypto.createHmac('sha256', secret).update(rawBody || '').digest('hex');
  const expected = `sha256=${digest}`;
  if (!safeEqual(expected, signatureHeader)) return { ok: false, reason: 'signature mismatch' };
  return { ok: true };
}

module.exports = {
  DEFAULT_MAX_AGE_SECONDS,
  safeEqual,
  slackSignature,
  verifySlackSignature,
  verifyGithubSignature,
};
