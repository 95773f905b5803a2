'use strict';

// /sz-hash: hash a string with a chosen algorithm, or derive a key with PBKDF2.
//   /sz-hash sha256 hello world
//   /sz-hash pbkdf2 sha512 100000 "correct horse"   (digest, iterations, password)
// The salt for PBKDF2 is random and shown in the reply so the result can be reproduced.

const crypto = require('crypto');
const { codeBlock } = require('../lib/format');

const DIGESTS = new Set(['md5', 'sha1', 'sha256', 'sha384', 'sha512']);
const MAX_INPUT = 1000;
const MAX_ITERATIONS = 1000000;

function hashText(algorithm, text) {
  if (!DIGESTS.has(algorithm)) throw usageError(`unsupported algorithm ${algorithm}`);
  return crypto.createHash(algorithm).update(text, 'utf8').digest('hex');
}

function pbkdf2(digest, iterations, password, salt = crypto.randomBytes(16)) {
  if (!DIGESTS.has(digest) || digest === 'md5') throw usageError(`unsupported PBKDF2 digest ${digest}`);
  if (!Number.isInteger(iterations) || iterations < 1 || iterations > MAX_ITERATIONS) {
    throw usageError(`iterations must be between 1 and ${MAX_ITERATIONS}`);
  }
  const keyLength = digest === 'sha512' ? 64 : 32;
  const key = crypto.pbkdf2Sync(password, salt, iterations, keyLength, digest);
  return { salt: salt.toString('hex'), key: key.toString('hex') };
}

function usageError(message) {
  return Object.assign(new Error(message), {
    userMessage: `${message}. Usage: \`/sz-hash <md5|sha1|sha256|sha384|sha512> text\` or \`/sz-hash pbkdf2 <digest> <iterations> <password>\``,
  });
}

module.exports = {
  name: 'hash',
  description: 'Hash text (md5, sha1, sha256, sha384, sha512) or derive a PBKDF2 key.',
  usage: '/sz-hash <algorithm> <text> | /sz-hash pbkdf2 <digest> <iterations> <password>',
  hashText,
  pbkdf2,
  run(args) {
    const [algorithm = '', ...rest] = args;
    const name = algorithm.toLowerCase();
    if (name === 'pbkdf2') {
      const [digest = 'sha512', iterations = '100000', ...password] = rest;
      const result = pbkdf2(digest.toLowerCase(), Number(iterations), password.join(' '));
      return `PBKDF2-${digest.toUpperCase()} × ${iterations}\nsalt ${codeBlock(result.salt)}\nkey ${codeBlock(result.key)}`;
    }
    const text = rest.join(' ');
    if (!text) throw usageError('nothing to hash');
    if (text.length > MAX_INPUT) throw usageError(`input longer than ${MAX_INPUT} characters`);
    return `${name}: ${codeBlock(hashText(name, text))}`;
  },
};
