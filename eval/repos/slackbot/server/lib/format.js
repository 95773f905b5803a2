'use strict';

// Helpers that turn command results into Slack messages (mrkdwn + Block Kit).

function ephemeral(text, blocks) {
  return blocks ? { response_type: 'ephemeral', text, blocks } : { response_type: 'ephemeral', text };
}

function inChannel(text, blocks) {
  return blocks ? { response_type: 'in_channel', text, blocks } : { response_type: 'in_channel', text };
}

function section(markdown) {
  return { type: 'section', text: { type: 'mrkdwn', text: markdown } };
}

function fields(pairs) {
  return {
    type: 'section',
    fields: pairs.map(([label, value]) => ({ type: 'mrkdwn', text: `*${label}*\n${value}` })),
  };
}

function codeBlock(text) {
  return '```' + String(text).replace(/```/g, "'''") + '```';
}

function duration(seconds) {
  const s = Math.floor(seconds % 60);
  const m = Math.floor((seconds / 60) % 60);
  const h = Math.floor((seconds / 3600) % 24);
  const d = Math.floor(seconds / 86400);
  return [d && `${d}d`, h && `${h}h`, m && `${m}m`, `${s}s`].filter(Boolean).join(' ');
}

function errorMessage(err) {
  return ephemeral(`:warning: ${err.userMessage || 'Something went wrong running that command.'}`);
}

module.exports = { ephemeral, inChannel, section, fields, codeBlock, duration, errorMessage };
