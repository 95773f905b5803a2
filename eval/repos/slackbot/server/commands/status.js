'use strict';

const { fields, duration, ephemeral } = require('../lib/format');
const metrics = require('../lib/metrics');
const { serviceStatus } = require('../lib/systemd');
const pkg = require('../../package.json');

module.exports = {
  name: 'status',
  description: 'Version, uptime, last deploy and service state.',
  usage: '/sz-status',
  timeoutMs: 5000,
  async run(_args, { config, deployer }) {
    const snapshot = metrics.snapshot();
    const service = await serviceStatus(config.deploy.serviceName);
    const last = deployer.lastDeploy();
    const lastText = last
      ? `${last.status} \`${(last.commit || last.ref).slice(0, 7)}\` by ${last.requestedBy} at ${last.startedAt}`
      : 'none since start-up';
    return ephemeral(`Slackzilla ${pkg.version}`, [
      fields([
        ['Version', pkg.version],
        ['Uptime', duration(snapshot.uptimeSeconds)],
        ['Service', `${service.ActiveState}${service.SubState ? ` (${service.SubState})` : ''}`],
        ['Last deploy', lastText],
        ['Commands run', String(Object.entries(snapshot.counters).filter(([k]) => k.endsWith('.ok')).reduce((n, [, v]) => n + v, 0))],
      ]),
    ]);
  },
};
