'use strict';

const test = require('node:test');
const assert = require('node:assert');
const crypto = require('crypto');
const { verifySlackSignature, verifyGithubSignature, slackSignature, safeEqual } = require('../server/lib/verify');

const SECRET = 'test-secret';
const BODY = 'token=x&command=%2Fsz-ping&user_id=U123';

test('accepts a correctly signed, fresh Slack request', () => {
  const now = Date.now();
  const timestamp = String(Math.floor(now / 1000));
  const signature = slackSignature(SECRET, timestamp, BODY);
  assert.deepStrictEqual(verifySlackSignature({ secret: SECRET, timestamp, signature, rawBody: BODY, now }), { ok: true });
});

test('rejects a Slack request older than five minutes (replay)', () => {
  const now = Date.now();
  const timestamp = String(Math.floor(now / 1000) - 301);
  const signature = slackSignature(SECRET, timestamp, BODY);
  const result = verifySlackSignature({ secret: SECRET, timestamp, signature, rawBody: BODY, now });
  assert.strictEqual(result.ok, false);
  assert.match(result.reason, /stale/);
});

test('rejects a tampered Slack body', () => {
  const now = Date.now();
  const timestamp = String(Math.floor(now / 1000));
  const signature = slackSignature(SECRET, timestamp, BODY);
  const result = verifySlackSignature({ secret: SECRET, timestamp, signature, rawBody: BODY + '&text=rm', now });
  assert.strictEqual(result.reason, 'signature mismatch');
});

test('verifies the GitHub X-Hub-Signature-256 header', () => {
  const body = JSON.stringify({ ref: 'refs/heads/main' });
  const header = 'sha256=' + crypto.createHmac('sha256', SECRET).update(body).digest('hex');
  assert.strictEqual(verifyGithubSignature({ secret: SECRET, signatureHeader: header, rawBody: body }).ok, true);
  assert.strictEqual(verifyGithubSignature({ secret: 'other', signatureHeader: header, rawBody: body }).ok, false);
  assert.strictEqual(verifyGithubSignature({ secret: SECRET, signatureHeader: 'sha1=abc', rawBody: body }).ok, false);
});

test('safeEqual handles different lengths without throwing', () => {
  assert.strictEqual(safeEqual('abc', 'abcd'), false);
  assert.strictEqual(safeEqual('abc', 'abc'), true);
});
