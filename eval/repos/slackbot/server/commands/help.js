'use strict';

module.exports = {
  name: 'help',
  description: 'List the commands you can run.',
  usage: '/sz-help',
  run(_args, { config, userId }) {
    // Required lazily: index.js requires this module while building the registry.
    const { listCommands } = require('./index');
    const admin = config.adminUserIds.includes(userId);
    const lines = listCommands({ includeAdmin: admin }).map(
      (command) => `• \`${command.usage || command.command}\` ${command.description}`
    );
    return lines.join('\n');
  },
};
