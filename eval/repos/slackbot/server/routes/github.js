'use strict';

// POST /github/webhook: GitHub calls this on every push. A push to the deploy
// branch starts a deploy; everything else is acknowledged and ignored.

const express = require('express');
const { verifyGithubSignature } = require('../lib/verify');
const logger = require('../lib/logger');
const metrics = require('../lib/metrics');

function githubRouter({ config, deployer }) {
  const router = express.Router();

  router.post('/webhook', (req, res) => {
    const event = req.get('X-GitHub-Event');
    const delivery = req.get('X-GitHub-Delivery');

    const verdict = verifyGithubSignature({
      secret: config.github.webhookSecret,
      signatureHeader: req.get('X-Hub-Signature-256'),
      rawBody: req.rawBody,
    });
    if (!verdict.ok) {
      metrics.increment('github.signature_rejected');
      logger.warn('rejected GitHub webhook', { delivery, reason: verdict.reason });
      return res.status(401).json({ error: 'invalid signature' });
    }

    if (event === 'ping') return res.json({ ok: true, zen: req.body.zen });
    if (event !== 'push') return res.status(202).json({ ignored: `event ${event}` });

    const expectedRef = `refs/heads/${config.github.deployBranch}`;
    if (req.body.ref !== expectedRef) {
      return res.status(202).json({ ignored: `ref ${req.body.ref}` });
    }

    const commit = req.body.after;
    const pusher = (req.body.pusher && req.body.pusher.name) || 'github';
    metrics.increment('github.deploys_triggered');

    // Answer GitHub right away (it times out after 10s) and deploy in the background.
    deployer
      .deploy({ ref: commit, requestedBy: `${pusher} (push)`, reason: `push ${delivery}` })
      .then((record) => logger.info('webhook deploy finished', { delivery, status: record.status }))
      .catch((err) => logger.error('webhook deploy failed', { delivery, err }));

    return res.status(202).json({ deploying: commit });
  });

  return router;
}

module.exports = { githubRouter };
