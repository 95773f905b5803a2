'use strict';

module.exports = {
  name: 'ping',
  description: 'Check that the bot is alive and how long it took to answer.',
  usage: '/sz-ping',
  run(_args, context) {
    const latency = context.receivedAt ? Date.now() - context.receivedAt : null;
    return latency === null ? ':table_tennis_paddle_and_ball: pong' : `:table_tennis_paddle_and_ball: pong (${latency} ms)`;
  },
};
