'use strict';

// The bot runs as a systemd service (deploy/slackzilla.service). Restarting it is
// delegated to systemctl via a narrowly-scoped sudoers rule, see docs/deployment.md.

const { execFile } = require('child_process');
const { promisify } = require('util');
const logger = require('./logger');

const run = promisify(execFile);
const UNIT_NAME = /^[a-zA-Z0-9@._-]+$/;

function assertUnit(name) {
  if (!UNIT_NAME.test(name)) throw new Error(`refusing to touch suspicious unit name "${name}"`);
}

async function restartService(name) {
  assertUnit(name);
  logger.info('restarting service', { unit: name });
  // --no-block: we are usually restarting ourselves; waiting would kill the caller mid-reply.
  await run('sudo', ['-n', 'systemctl', 'restart', '--no-block', `${name}.service`], { timeout: 10000 });
}

async function serviceStatus(name) {
  assertUnit(name);
  try {
    const { stdout } = await run('systemctl', ['show', `${name}.service`, '--property=ActiveState,SubState,ActiveEnterTimestamp'], {
      timeout: 5000,
    });
    const status = {};
    for (const line of stdout.trim().split('\n')) {
      const [key, ...rest] = line.split('=');
      status[key] = rest.join('=');
    }
    return status;
  } catch (err) {
    logger.warn('systemctl show failed', { unit: name, err });
    return { ActiveState: 'unknown' };
  }
}

module.exports = { restartService, serviceStatus };
