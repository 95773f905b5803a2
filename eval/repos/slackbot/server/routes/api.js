'use strict';

// Small read-mostly JSON API used by the status page and by on-call scripts.
// Not exposed publicly: nginx only forwards /api from the office network.

const express = require('express');
const metrics = require('../lib/metrics');
const { listCommands, findCommand } = require('../commands');
const pkg = require('../../package.json');

function apiRouter({ config, deployer }) {
  const router = express.Router();

  router.route('/status').get((_req, res) => {
    res.json({
      name: pkg.name,
      version: pkg.version,
      env: config.env,
      uptimeSeconds: Math.round(process.uptime()),
      deploy: deployer.status(),
    });
  });

  router.route('/metrics').get((_req, res) => {
    res.json(metrics.snapshot());
  });

  router
    .route('/commands')
    .get((_req, res) => {
      res.json({ commands: listCommands() });
    })
    .post((req, res) => {
      // Lets scripts check whether a command name is known before wiring it up in Slack.
      const name = req.body && req.body.command;
      const command = findCommand(name);
      if (!command) return res.status(404).json({ error: `unknown command ${name}` });
      return res.json({ command: `/sz-${command.name}`, usage: command.usage, adminOnly: command.adminOnly });
    });

  router.route('/deploys').get((_req, res) => {
    res.json(deployer.status());
  });

  return router;
}

module.exports = { apiRouter };
