'use strict';

const { restartService } = require('../lib/systemd');

module.exports = {
  name: 'restart',
  description: 'Restart the bot service without deploying (admins only).',
  usage: '/sz-restart',
  adminOnly: true,
  async run(_args, { config, userName }) {
    await restartService(config.deploy.serviceName);
    return { response_type: 'in_channel', text: `:arrows_counterclockwise: ${userName} restarted ${config.deploy.serviceName}; back in a few seconds.` };
  },
};
