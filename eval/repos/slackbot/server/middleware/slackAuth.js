'use strict';

const { verifySlackSignature } = require('../lib/verify');
const logger = require('../lib/logger');
const metrics = require('../lib/metrics');

// Express middleware that rejects anything not signed by our Slack app.
// Mounted in front of every /slack route (see routes/slack.js).
function requireSlackSignature(config) {
  const { signingSecret, maxRequestAgeSeconds } = config.slack;

  return function slackSignatureMiddleware(req, res, next) {
    const result = verifySlackSignature({
      secret: signingSecret,
      timestamp: req.get('X-Slack-Request-Timestamp'),
      signature: req.get('X-Slack-Signature'),
      rawBody: req.rawBody,
      maxAgeSeconds: maxRequestAgeSeconds,
    });

    if (!result.ok) {
      metrics.increment('slack.signature_rejected');
      logger.warn('rejected Slack request', { reason: result.reason, path: req.path, ip: req.ip });
      // Same answer for every failure: do not tell an attacker which check failed.
      return res.status(401).send('invalid signature');
    }
    return next();
  };
}

module.exports = { requireSlackSignature };
