'use strict';

// Thin wrapper over the two Slack Web API calls we make. Uses the global fetch
// available since Node 18, so there is no SDK dependency to keep patched.

const logger = require('./logger');

const API = 'https://slack.com/api';

async function postMessage(token, { channel, text, blocks, threadTs }) {
  if (!token) throw new Error('SLACK_BOT_TOKEN is not set; cannot post messages');
  const response = await fetch(`${API}/chat.postMessage`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json; charset=utf-8',
      Authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({ channel, text, blocks, thread_ts: threadTs }),
  });
  const payload = await response.json();
  if (!payload.ok) {
    logger.warn('chat.postMessage failed', { channel, error: payload.error });
    throw new Error(`Slack API error: ${payload.error}`);
  }
  return payload;
}

// Slash commands get a response_url that accepts up to five follow-ups within
// 30 minutes. We use it for anything that takes longer than Slack's 3-second limit.
async function respondLater(responseUrl, message) {
  const response = await fetch(responseUrl, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ response_type: 'ephemeral', ...message }),
  });
  if (!response.ok) {
    logger.warn('response_url post failed', { status: response.status });
  }
  return response.ok;
}

module.exports = { postMessage, respondLater };
