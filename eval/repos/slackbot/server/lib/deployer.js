'use strict';

// Runs deployments: fetch the requested commit, install dependencies, restart the
// service. Triggered by the GitHub webhook (routes/github.js) and by /sz-deploy.
// Only one deploy may run at a time; a second request is refused, not queued.

const { execFile } = require('child_process');
const { promisify } = require('util');
const logger = require('./logger');
const metrics = require('./metrics');
const { restartService } = require('./systemd');

const run = promisify(execFile);
const SHA = /^[0-9a-f]{7,40}$/;
const HISTORY_SIZE = 20;

class DeployInProgressError extends Error {
  constructor(current) {
    super(`deploy of ${current.ref} already running since ${current.startedAt}`);
    this.userMessage = `A deploy of \`${current.ref}\` is already running (started by ${current.requestedBy}).`;
  }
}

class Deployer {
  constructor({ directory, serviceName, branch, exec = run, restart = restartService }) {
    this.directory = directory;
    this.serviceName = serviceName;
    this.branch = branch;
    this.exec = exec;
    this.restart = restart;
    this.current = null;
    this.history = [];
  }

  async git(...args) {
    const { stdout } = await this.exec('git', args, { cwd: this.directory, timeout: 60000 });
    return stdout.trim();
  }

  async currentCommit() {
    return this.git('rev-parse', 'HEAD');
  }

  // ref is a branch name or a commit SHA; anything else is rejected before it reaches git.
  async deploy({ ref = this.branch, requestedBy = 'unknown', reason = '' } = {}) {
    if (this.current) throw new DeployInProgressError(this.current);
    if (ref !== this.branch && !SHA.test(ref)) {
      throw Object.assign(new Error(`invalid ref ${ref}`), { userMessage: `\`${ref}\` is not a commit SHA or the deploy branch.` });
    }

    this.current = { ref, requestedBy, reason, startedAt: new Date().toISOString() };
    const started = Date.now();
    const record = { ...this.current, previous: null, commit: null, status: 'running' };
    logger.info('deploy started', this.current);

    try {
      record.previous = await this.currentCommit();
      await this.git('fetch', '--prune', 'origin');
      const target = ref === this.branch ? `origin/${this.branch}` : ref;
      await this.git('checkout', '--detach', target);
      record.commit = await this.currentCommit();
      await this.exec('npm', ['ci', '--omit=dev', '--no-audit', '--no-fund'], { cwd: this.directory, timeout: 300000 });
      await this.restart(this.serviceName);
      record.status = 'succeeded';
      metrics.increment('deploys.succeeded');
      return record;
    } catch (err) {
      record.status = 'failed';
      record.error = err.message;
      metrics.increment('deploys.failed');
      logger.error('deploy failed', { ref, err });
      throw err;
    } finally {
      record.durationMs = Date.now() - started;
      metrics.observe('deploys.duration', record.durationMs);
      this.remember(record);
      this.current = null;
    }
  }

  // Roll back to the commit that was live before the last successful deploy.
  async rollback({ requestedBy }) {
    const last = this.history.find((entry) => entry.status === 'succeeded' && entry.previous);
    if (!last) {
      throw Object.assign(new Error('nothing to roll back to'), { userMessage: 'No earlier successful deploy is recorded.' });
    }
    return this.deploy({ ref: last.previous, requestedBy, reason: `rollback of ${last.commit}` });
  }

  remember(record) {
    this.history.unshift(record);
    if (this.history.length > HISTORY_SIZE) this.history.length = HISTORY_SIZE;
  }

  lastDeploy() {
    return this.history[0] || null;
  }

  status() {
    return { running: this.current, last: this.lastDeploy(), recent: this.history.slice(0, 5) };
  }
}

let shared = null;

function getDeployer(config) {
  if (!shared) {
    shared = new Deployer({
      directory: config.deploy.directory,
      serviceName: config.deploy.serviceName,
      branch: config.github.deployBranch,
    });
  }
  return shared;
}

module.exports = { Deployer, DeployInProgressError, getDeployer };
