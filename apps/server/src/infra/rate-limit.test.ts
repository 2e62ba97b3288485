import { describe, expect, it } from 'vitest';
import { addressKey } from './rate-limit.js';

describe('addressKey', () => {
  it('counts IPv4 addresses one by one, also written IPv4-mapped', () => {
    expect(addressKey('203.0.113.7')).toBe('203.0.113.7');
    expect(addressKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(addressKey('::FFFF:203.0.113.7')).toBe('203.0.113.7');
  });

  it('counts an IPv6 address as its /64, however it is written', () => {
    const key = '2001:db8:7:1::/64';
    for (const ip of ['2001:db8:7:1::1', '2001:0db8:0007:0001:ffff:ffff:ffff:ffff', '2001:DB8:7:1:0:0:0:0', '2001:db8:7:1::ffff:1.2.3.4'])
      expect(addressKey(ip)).toBe(key);
    expect(addressKey('2001:db8:7:2::1')).toBe('2001:db8:7:2::/64');
    expect(addressKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
    expect(addressKey('fe80::1')).toBe('fe80:0:0:0::/64');
  });

  it('leaves anything that is not an address as it is', () => {
    expect(addressKey('')).toBe('');
    expect(addressKey('not an address')).toBe('not an address');
  });
});
