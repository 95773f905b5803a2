'use strict';

// Fixed-window rate limiter keyed by Slack user ID (falls back to the client IP).
// State is in memory: good enough for the single instance we run behind nginx.
// If we ever scale out, this needs a shared store.

const metrics = require('../lib/metrics');

const WINDOW_MS = 60 * 1000;

class RateLimiter {
  constructor({ limit, windowMs = WINDOW_MS, now = () => Date.now() }) {
    this.limit = limit;
    this.windowMs = windowMs;
    this.now = now;
    this.buckets = new Map();
  }

  // Returns { allowed, remaining, resetAt } and records the hit when allowed.
  hit(key) {
    const current = this.now();
    let bucket = this.buckets.get(key);
    if (!bucket || current >= bucket.resetAt) {
      bucket = { count: 0, resetAt: current + this.windowMs };
      this.buckets.set(key, bucket);
    }
    if (bucket.count >= this.limit) {
      return { allowed: false, remaining: 0, resetAt: bucket.resetAt };
    }
    bucket.count += 1;
    return { allowed: true, remaining: this.limit - bucket.count, resetAt: bucket.resetAt };
  }

  // Drop expired buckets so the map does not grow with every user who ever typed a command.
  sweep() {
    const current = this.now();
    for (const [key, bucket] of this.buckets) {
      if (current >= bucket.resetAt) this.buckets.delete(key);
    }
  }
}

function rateLimit({ limit, windowMs } = {}) {
  const limiter = new RateLimiter({ limit, windowMs });
  const timer = setInterval(() => limiter.sweep(), WINDOW_MS);
  timer.unref();

  function rateLimitMiddleware(req, res, next) {
    const key = (req.body && req.body.user_id) || req.ip;
    const verdict = limiter.hit(key);
    res.set('X-RateLimit-Remaining', String(verdict.remaining));
    if (!verdict.allowed) {
      metrics.increment('commands.rate_limited');
      const seconds = Math.ceil((verdict.resetAt - Date.now()) / 1000);
      res.set('Retry-After', String(seconds));
      // Slack shows a 200 response body to the user; a 429 would just say "failed".
      return res.status(200).json({
        response_type: 'ephemeral',
        text: `Slow down! You can run more commands in ${seconds}s.`,
      });
    }
    return next();
  }

  rateLimitMiddleware.limiter = limiter;
  return rateLimitMiddleware;
}

module.exports = { RateLimiter, rateLimit, WINDOW_MS };
