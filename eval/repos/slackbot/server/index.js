'use strict';

// Entry point: load configuration, start metrics persistence, listen, and shut
// down cleanly on SIGTERM (systemd stop/restart) so in-flight replies are sent.

const { loadConfig } = require('./config');
const { createApp } = require('./app');
const logger = require('./lib/logger');
const metrics = require('./lib/metrics');

function main() {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    logger.error('invalid configuration', { err });
    process.exit(78); // EX_CONFIG: systemd will not restart-loop on this exit code
  }
  logger.setLevel(config.logLevel);
  metrics.startPersistence(config.metricsFile);

  const app = createApp(config);
  const server = app.listen(config.port, '127.0.0.1', () => {
    logger.info('slackzilla listening', { port: config.port, env: config.env });
  });

  function shutdown(signal) {
    logger.info('shutting down', { signal });
    server.close(() => {
      metrics.stopPersistence(config.metricsFile);
      process.exit(0);
    });
    // Slack waits at most 3 seconds anyway; do not hang the restart.
    setTimeout(() => process.exit(1), 5000).unref();
  }

  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('unhandledRejection', (reason) => {
    logger.error('unhandled promise rejection', { err: reason instanceof Error ? reason : new Error(String(reason)) });
  });
}

main();
