'use strict';

// Minimal structured logger: one JSON object per line on stdout, which journald
// captures (see deploy/slackzilla.service). Tokens and secrets are masked.

const LEVELS = { debug: 10, info: 20, warn: 30, error: 40 };
const SECRET_KEYS = /token|secret|signature|password|authorization/i;
const SLACK_TOKEN = /xox[abpr]-[A-Za-z0-9-]+/g;

let threshold = LEVELS[process.env.LOG_LEVEL] || LEVELS.info;

function setLevel(level) {
  if (!(level in LEVELS)) throw new Error(`unknown log level ${level}`);
  threshold = LEVELS[level];
}

function redact(value, depth = 0) {
  if (depth > 4 || value === null || value === undefined) return value;
  if (typeof value === 'string') return value.replace(SLACK_TOKEN, 'xox*-[redacted]');
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1));
  if (typeof value === 'object') {
    const out = {};
    for (const [key, item] of Object.entries(value)) {
      out[key] = SECRET_KEYS.test(key) ? '[redacted]' : redact(item, depth + 1);
    }
    return out;
  }
  return value;
}

function write(level, message, fields) {
  if (LEVELS[level] < threshold) return;
  const entry = { time: new Date().toISOString(), level, msg: message, ...redact(fields || {}) };
  if (fields && fields.err instanceof Error) {
    entry.err = { message: fields.err.message, stack: fields.err.stack };
  }
  const line = JSON.stringify(entry);
  if (LEVELS[level] >= LEVELS.error) process.stderr.write(line + '\n');
  else process.stdout.write(line + '\n');
}

module.exports = {
  setLevel,
  redact,
  debug: (msg, fields) => write('debug', msg, fields),
  info: (msg, fields) => write('info', msg, fields),
  warn: (msg, fields) => write('warn', msg, fields),
  error: (msg, fields) => write('error', msg, fields),
};
