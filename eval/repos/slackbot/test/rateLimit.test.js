'use strict';

const test = require('node:test');
const assert = require('node:assert');
const { RateLimiter } = require('../server/middleware/rateLimit');

test('allows up to the limit per window, then refuses', () => {
  let now = 0;
  const limiter = new RateLimiter({ limit: 2, windowMs: 1000, now: () => now });
  assert.strictEqual(limiter.hit('U1').allowed, true);
  assert.strictEqual(limiter.hit('U1').allowed, true);
  assert.strictEqual(limiter.hit('U1').allowed, false);
  assert.strictEqual(limiter.hit('U2').allowed, true, 'other users have their own bucket');
  now = 1000;
  assert.strictEqual(limiter.hit('U1').allowed, true, 'a new window starts fresh');
});

test('sweep removes expired buckets', () => {
  let now = 0;
  const limiter = new RateLimiter({ limit: 1, windowMs: 10, now: () => now });
  limiter.hit('U1');
  now = 20;
  limiter.sweep();
  assert.strictEqual(limiter.buckets.size, 0);
});
