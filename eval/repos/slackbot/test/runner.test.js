'use strict';

const test = require('node:test');
const assert = require('node:assert');
const { runCommand, parseArgs } = require('../server/commands/runner');

const config = { adminUserIds: ['UADMIN'], commandTimeoutMs: 200, deploy: { serviceName: 'slackzilla' } };
const deployer = {
  deploy: async ({ ref }) => ({ status: 'succeeded', ref, commit: 'abcdef1234', durationMs: 1000 }),
  status: () => ({ running: null, recent: [] }),
  lastDeploy: () => null,
};

test('parseArgs keeps quoted strings together', () => {
  assert.deepStrictEqual(parseArgs('pbkdf2 sha512 1000 "correct horse"'), ['pbkdf2', 'sha512', '1000', 'correct horse']);
});

test('ping answers pong', async () => {
  const reply = await runCommand({ command: '/sz-ping', text: '', user_id: 'U1' }, { config, deployer });
  assert.match(reply.text, /pong/);
});

test('unknown commands point to help', async () => {
  const reply = await runCommand({ command: '/sz-nope', text: '', user_id: 'U1' }, { config, deployer });
  assert.match(reply.text, /sz-help/);
});

test('deploy is refused for non-admins', async () => {
  const reply = await runCommand({ command: '/sz-deploy', text: '', user_id: 'U1' }, { config, deployer });
  assert.match(reply.text, /limited to admins/);
});

test('hash computes sha256', async () => {
  const reply = await runCommand({ command: '/sz-hash', text: 'sha256 hello', user_id: 'U1' }, { config, deployer });
  assert.match(reply.text, /2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824/);
});
