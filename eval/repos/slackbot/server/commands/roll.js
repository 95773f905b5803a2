'use strict';

// /sz-roll 2d6+3 : dice notation, because every team bot needs one.

const crypto = require('crypto');

const NOTATION = /^(\d{1,2})?d(\d{1,3})([+-]\d{1,4})?$/i;

function parseDice(spec) {
  const match = NOTATION.exec(String(spec || 'd20').trim());
  if (!match) return null;
  const count = Number(match[1] || 1);
  const sides = Number(match[2]);
  const modifier = Number(match[3] || 0);
  if (count < 1 || count > 20 || sides < 2) return null;
  return { count, sides, modifier };
}

function roll({ count, sides, modifier }, random = crypto.randomInt) {
  const rolls = Array.from({ length: count }, () => random(1, sides + 1));
  return { rolls, total: rolls.reduce((sum, value) => sum + value, 0) + modifier };
}

module.exports = {
  name: 'roll',
  description: 'Roll dice, e.g. 2d6+3 (default d20).',
  usage: '/sz-roll [NdM+K]',
  parseDice,
  roll,
  run(args, context) {
    const dice = parseDice(args[0]);
    if (!dice) return 'Try something like `/sz-roll 2d6+3` (up to 20 dice).';
    const result = roll(dice);
    const detail = result.rolls.length > 1 || dice.modifier ? ` (${result.rolls.join(' + ')}${dice.modifier ? ` ${dice.modifier > 0 ? '+' : '-'} ${Math.abs(dice.modifier)}` : ''})` : '';
    return { response_type: 'in_channel', text: `<@${context.userId}> rolled *${result.total}*${detail}` };
  },
};
