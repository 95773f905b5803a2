'use strict';

// In-process counters and timings, exposed on GET /api/metrics and flushed to
// disk every minute so a restart does not zero the dashboard.

const fs = require('fs');
const path = require('path');
const logger = require('./logger');

const counters = new Map();
const timings = new Map();
const startedAt = Date.now();
let flushTimer = null;

function increment(name, by = 1) {
  counters.set(name, (counters.get(name) || 0) + by);
}

// Keeps count, total, max and the last 100 samples for a rough p95.
function observe(name, milliseconds) {
  let entry = timings.get(name);
  if (!entry) {
    entry = { count: 0, totalMs: 0, maxMs: 0, samples: [] };
    timings.set(name, entry);
  }
  entry.count += 1;
  entry.totalMs += milliseconds;
  entry.maxMs = Math.max(entry.maxMs, milliseconds);
  entry.samples.push(milliseconds);
  if (entry.samples.length > 100) entry.samples.shift();
}

function percentile(samples, p) {
  if (!samples.length) return 0;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, rank)];
}

async function time(name, fn) {
  const started = process.hrtime.bigint();
  try {
    return await fn();
  } finally {
    observe(name, Number(process.hrtime.bigint() - started) / 1e6);
  }
}

function snapshot() {
  const timingSummary = {};
  for (const [name, entry] of timings) {
    timingSummary[name] = {
      count: entry.count,
      avgMs: entry.count ? Math.round((entry.totalMs / entry.count) * 10) / 10 : 0,
      maxMs: Math.round(entry.maxMs),
      p95Ms: Math.round(percentile(entry.samples, 95)),
    };
  }
  return {
    uptimeSeconds: Math.round((Date.now() - startedAt) / 1000),
    counters: Object.fromEntries(counters),
    timings: timingSummary,
  };
}

function load(file) {
  try {
    const saved = JSON.parse(fs.readFileSync(file, 'utf8'));
    for (const [name, value] of Object.entries(saved.counters || {})) counters.set(name, value);
  } catch (err) {
    if (err.code !== 'ENOENT') logger.warn('could not load saved metrics', { file, err });
  }
}

function flush(file) {
  const tmp = `${file}.tmp`;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(tmp, JSON.stringify(snapshot(), null, 2));
  fs.renameSync(tmp, file); // atomic on the same filesystem
}

function startPersistence(file, intervalMs = 60 * 1000) {
  load(file);
  flushTimer = setInterval(() => {
    try {
      flush(file);
    } catch (err) {
      logger.error('metrics flush failed', { file, err });
    }
  }, intervalMs);
  flushTimer.unref();
}

function stopPersistence(file) {
  if (flushTimer) clearInterval(flushTimer);
  flushTimer = null;
  if (file) flush(file);
}

function reset() {
  counters.clear();
  timings.clear();
}

module.exports = { increment, observe, time, snapshot, percentile, startPersistence, stopPersistence, flush, reset };
