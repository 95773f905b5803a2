'use strict';

// The command registry. Each module in this directory exports
//   { name, description, usage, adminOnly?, timeoutMs?, run(args, context) }
// and is listed here explicitly so that adding a file never exposes a command by accident.

const modules = [
  require('./ping'),
  require('./hash'),
  require('./roll'),
  require('./status'),
  require('./deploy'),
  require('./restart'),
  require('./help'),
];

const PREFIX = '/sz-';
const registry = new Map();

function register(command) {
  for (const key of ['name', 'description', 'run']) {
    if (!command[key]) throw new Error(`command module is missing "${key}"`);
  }
  if (registry.has(command.name)) throw new Error(`duplicate command ${command.name}`);
  registry.set(command.name, Object.freeze({ adminOnly: false, usage: '', ...command }));
}

modules.forEach(register);

// Accepts "/sz-ping", "sz-ping" or "ping".
function findCommand(slashName) {
  const bare = String(slashName || '')
    .trim()
    .toLowerCase()
    .replace(/^\//, '')
    .replace(/^sz-/, '');
  return registry.get(bare) || null;
}

function listCommands({ includeAdmin = true } = {}) {
  return [...registry.values()]
    .filter((command) => includeAdmin || !command.adminOnly)
    .map(({ name, description, usage, adminOnly }) => ({ command: `${PREFIX}${name}`, description, usage, adminOnly }));
}

module.exports = { findCommand, listCommands, register, PREFIX };
