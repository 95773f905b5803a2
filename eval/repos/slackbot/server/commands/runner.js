'use strict';

// Runs one slash command from start to finish: look it up, check who may run it,
// enforce Slack's 3-second budget, record metrics and turn errors into a reply.

const { findCommand } = require('./index');
const format = require('../lib/format');
const logger = require('../lib/logger');
const metrics = require('../lib/metrics');
const { respondLater } = require('../lib/slackClient');

class CommandTimeoutError extends Error {
  constructor(name, ms) {
    super(`command ${name} timed out after ${ms}ms`);
    this.userMessage = 'That is taking a while; I will post the result here when it is done.';
  }
}

// Split the command text into arguments, keeping "quoted strings" together.
function parseArgs(text) {
  const args = [];
  const pattern = /"([^"]*)"|(\S+)/g;
  let match;
  while ((match = pattern.exec(text || '')) !== null) {
    args.push(match[1] !== undefined ? match[1] : match[2]);
  }
  return args;
}

function isAdmin(userId, config) {
  return config.adminUserIds.includes(userId);
}

function withTimeout(promise, ms, name) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new CommandTimeoutError(name, ms)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Run a slash command.
 *
 * payload is the form body Slack posts (command, text, user_id, channel_id, response_url...).
 * Returns the message to send back in the HTTP response.
 */
async function runCommand(payload, { config, deployer }) {
  const command = findCommand(payload.command);
  if (!command) {
    metrics.increment('commands.unknown');
    return format.ephemeral(`I don't know \`${payload.command}\`. Try \`/sz-help\`.`);
  }

  if (command.adminOnly && !isAdmin(payload.user_id, config)) {
    metrics.increment(`commands.${command.name}.denied`);
    logger.warn('admin command denied', { command: command.name, user: payload.user_id });
    return format.ephemeral(`\`/sz-${command.name}\` is limited to admins.`);
  }

  const context = {
    config,
    deployer,
    userId: payload.user_id,
    userName: payload.user_name,
    channelId: payload.channel_id,
    responseUrl: payload.response_url,
    receivedAt: payload.receivedAt,
  };
  const args = parseArgs(payload.text);
  const timeoutMs = command.timeoutMs || config.commandTimeoutMs;
  const started = Date.now();
  const work = Promise.resolve().then(() => command.run(args, context));

  try {
    const reply = await withTimeout(work, timeoutMs, command.name);
    metrics.increment(`commands.${command.name}.ok`);
    return typeof reply === 'string' ? format.ephemeral(reply) : reply;
  } catch (err) {
    if (err instanceof CommandTimeoutError && payload.response_url) {
      // Let the work finish in the background and deliver it via response_url.
      work
        .then((reply) => respondLater(payload.response_url, typeof reply === 'string' ? { text: reply } : reply))
        .catch((lateErr) => respondLater(payload.response_url, format.errorMessage(lateErr)));
      metrics.increment(`commands.${command.name}.deferred`);
      return format.ephemeral(err.userMessage);
    }
    metrics.increment(`commands.${command.name}.error`);
    logger.error('command failed', { command: command.name, user: payload.user_id, err });
    return format.errorMessage(err);
  } finally {
    metrics.observe(`commands.${command.name}.duration`, Date.now() - started);
  }
}

module.exports = { runCommand, parseArgs, isAdmin, withTimeout, CommandTimeoutError };
