'use strict';

// Signature checks need the exact bytes that were signed, not the parsed body.
// express.json() and express.urlencoded() accept a `verify` hook that sees the
// raw buffer before parsing; we keep a copy on the request.

const express = require('express');

const LIMIT = '256kb';

function keepRawBody(req, _res, buffer) {
  req.rawBody = buffer && buffer.length ? buffer.toString('utf8') : '';
}

function bodyParsers() {
  return [
    express.json({ limit: LIMIT, verify: keepRawBody }),
    express.urlencoded({ extended: false, limit: LIMIT, verify: keepRawBody }),
  ];
}

module.exports = { bodyParsers, keepRawBody };
