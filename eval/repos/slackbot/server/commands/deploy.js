'use strict';

// /sz-deploy            deploy the tip of the deploy branch
// /sz-deploy <sha>      deploy a specific commit
// /sz-deploy rollback   go back to the commit before the last successful deploy
// /sz-deploy status     what is running and what ran recently

const { ephemeral, inChannel, section } = require('../lib/format');

function describe(record) {
  const commit = (record.commit || record.ref || '').slice(0, 7);
  return `${record.status} \`${commit}\` (${Math.round((record.durationMs || 0) / 1000)}s)`;
}

module.exports = {
  name: 'deploy',
  description: 'Deploy the bot from GitHub, roll back, or show deploy status (admins only).',
  usage: '/sz-deploy [sha|rollback|status]',
  adminOnly: true,
  timeoutMs: 2000, // deploys take minutes; the runner defers the answer to response_url
  async run(args, { deployer, userName }) {
    const [action = ''] = args;

    if (action === 'status') {
      const { running, recent } = deployer.status();
      const lines = recent.map((record) => `• ${describe(record)} by ${record.requestedBy}`);
      return ephemeral('Deploy status', [
        section(running ? `:hourglass: deploying \`${running.ref}\` for ${running.requestedBy}` : 'No deploy running.'),
        section(lines.length ? lines.join('\n') : '_No deploys since start-up._'),
      ]);
    }

    if (action === 'rollback') {
      const record = await deployer.rollback({ requestedBy: userName });
      return inChannel(`:rewind: ${userName} rolled back: ${describe(record)}`);
    }

    const record = await deployer.deploy({ ref: action || undefined, requestedBy: userName, reason: 'slash command' });
    return inChannel(`:rocket: ${userName} deployed ${describe(record)}`);
  },
};
