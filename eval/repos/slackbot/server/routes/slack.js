'use strict';

// Everything Slack calls: slash commands, the Events API and interactive components.
// The whole router sits behind requireSlackSignature and the per-user rate limiter.

const express = require('express');
const { requireSlackSignature } = require('../middleware/slackAuth');
const { rateLimit } = require('../middleware/rateLimit');
const { runCommand } = require('../commands/runner');
const logger = require('../lib/logger');
const metrics = require('../lib/metrics');

function slackRouter({ config, deployer }) {
  const router = express.Router();

  router.use(requireSlackSignature(config));

  // POST /slack/commands: one endpoint for every /sz-* command (the Slack app's
  // Request URL for each slash command points here).
  router.post('/commands', rateLimit({ limit: config.rateLimitPerMinute }), async (req, res, next) => {
    try {
      metrics.increment('slack.commands');
      const payload = { ...req.body, receivedAt: Date.now() };
      const reply = await metrics.time('slack.command_response', () => runCommand(payload, { config, deployer }));
      res.json(reply);
    } catch (err) {
      next(err);
    }
  });

  // POST /slack/events: Events API. Slack first sends a url_verification challenge.
  router.post('/events', (req, res) => {
    const body = req.body || {};
    if (body.type === 'url_verification') return res.json({ challenge: body.challenge });
    if (body.type === 'event_callback') {
      metrics.increment(`slack.events.${body.event && body.event.type}`);
      logger.debug('slack event', { type: body.event && body.event.type, team: body.team_id });
    }
    // Acknowledge immediately; Slack retries anything slower than 3 seconds.
    return res.sendStatus(200);
  });

  // POST /slack/interactions: button clicks arrive as a form field "payload" holding JSON.
  router.post('/interactions', (req, res) => {
    let payload;
    try {
      payload = JSON.parse(req.body.payload || '{}');
    } catch {
      return res.status(400).send('bad payload');
    }
    metrics.increment('slack.interactions');
    logger.info('interaction', { type: payload.type, user: payload.user && payload.user.id });
    return res.sendStatus(200);
  });

  return router;
}

module.exports = { slackRouter };
