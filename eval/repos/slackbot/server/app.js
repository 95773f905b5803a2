'use strict';

// Builds the Express application. Kept separate from index.js so tests can
// create an app without opening a port.

const express = require('express');
const { bodyParsers } = require('./middleware/rawBody');
const { slackRouter } = require('./routes/slack');
const { githubRouter } = require('./routes/github');
const { apiRouter } = require('./routes/api');
const { getDeployer } = require('./lib/deployer');
const logger = require('./lib/logger');
const metrics = require('./lib/metrics');

function requestLog(req, res, next) {
  const started = process.hrtime.bigint();
  res.on('finish', () => {
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    metrics.observe('http.request', ms);
    logger.debug('request', { method: req.method, path: req.path, status: res.statusCode, ms: Math.round(ms) });
  });
  next();
}

function createApp(config, { deployer = getDeployer(config) } = {}) {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', 'loopback'); // nginx on the same host sets X-Forwarded-For

  app.use(requestLog);
  app.use(...bodyParsers());

  app.get('/healthz', (_req, res) => res.json({ ok: true }));

  app.use('/slack', slackRouter({ config, deployer }));
  app.use('/github', githubRouter({ config, deployer }));
  app.use('/api', apiRouter({ config, deployer }));
  app.use(express.static('public', { maxAge: '1h' }));

  app.use((req, res) => res.status(404).json({ error: `no route for ${req.method} ${req.path}` }));

  // Error handler: four arguments or Express will not treat it as one.
  // eslint-disable-next-line no-unused-vars
  app.use((err, req, res, _next) => {
    metrics.increment('http.errors');
    logger.error('unhandled error', { path: req.path, err });
    const status = err.status || err.statusCode || 500;
    res.status(status).json({ error: status === 500 ? 'internal error' : err.message });
  });

  return app;
}

module.exports = { createApp };
