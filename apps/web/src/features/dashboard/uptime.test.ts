import { describe, expect, it } from 'vitest';
import { createI18n } from '../../lib/i18n';
import { localeResources } from '../../test/render';
import { formatUptime, uptimeParts } from './uptime';

const MIN = 60;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

describe('uptime', () => {
  it.each([
    [0, { days: 0, hours: 0, minutes: 0 }],
    [59, { days: 0, hours: 0, minutes: 0 }],
    [61, { days: 0, hours: 0, minutes: 1 }],
    [2 * DAY + 3 * HOUR + 5 * MIN + 59, { days: 2, hours: 3, minutes: 5 }],
    [-30, { days: 0, hours: 0, minutes: 0 }],
  ])('%i seconds are %j', (seconds, parts) => {
    expect(uptimeParts(seconds)).toEqual(parts);
  });

  it.each([
    ['en', 5 * MIN, '5 minutes'],
    ['en', 1 * MIN, '1 minute'],
    ['en', HOUR, '1 hour 0 minutes'],
    ['en', DAY + MIN, '1 day 0 hours 1 minute'],
    ['en', 2 * DAY + 3 * HOUR + 5 * MIN, '2 days 3 hours 5 minutes'],
    ['zh-CN', 2 * DAY + 3 * HOUR + 5 * MIN, '2 天 3 小时 5 分钟'],
    ['zh-CN', 1 * MIN, '1 分钟'],
  ])('in %s, %i seconds read %j', async (language, seconds, text) => {
    localStorage.setItem('i18nextLng', language);
    const i18n = await createI18n(localeResources);
    expect(formatUptime(seconds, i18n.getFixedT(language, 'dashboard'))).toBe(text);
  });
});
