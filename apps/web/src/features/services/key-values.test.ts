import { describe, expect, it } from 'vitest';
import { withEnvPrefill } from '../installs';
import { formatKeyValueLines, parseJsonObject, parseKeyValueLines } from './key-values';

describe('KEY=VALUE lines (docs/console.md §5)', () => {
  it('reads one pair per line and keeps "=" inside the value', () => {
    expect(parseKeyValueLines('API_KEY=abc\nURL=https://x.test/?a=1&b=2\r\nTOKEN==x=')).toEqual({
      API_KEY: 'abc',
      URL: 'https://x.test/?a=1&b=2',
      TOKEN: '=x=',
    });
  });

  it('drops lines without "=", with an empty key or with an empty value', () => {
    expect(parseKeyValueLines('no equals\n=value\nEMPTY=\n  =  \nKEEP=1\n\n')).toEqual({ KEEP: '1' });
  });

  it('trims keys and values', () => {
    expect(parseKeyValueLines('  A  =  b c  ')).toEqual({ A: 'b c' });
  });

  it('formats back into lines that parse to the same values', () => {
    const values = { A: '1', B: 'x=y' };
    expect(formatKeyValueLines(values)).toBe('A=1\nB=x=y');
    expect(parseKeyValueLines(formatKeyValueLines(values))).toEqual(values);
  });
});

describe('parseJsonObject', () => {
  it('reads a JSON object of values as strings', () => {
    expect(parseJsonObject('{"A":"1","N":2,"B":true}')).toEqual({ A: '1', N: '2', B: 'true' });
  });

  it('reads anything else as empty', () => {
    for (const text of [undefined, '', 'null', '[1]', '"s"', '{bad']) expect(parseJsonObject(text), String(text)).toEqual({});
  });
});

describe('withEnvPrefill', () => {
  it('adds NAME= for the first missing variable', () => {
    expect(withEnvPrefill('', 'API_KEY')).toBe('API_KEY=');
    expect(withEnvPrefill('A=1\n', 'API_KEY')).toBe('A=1\nAPI_KEY=');
  });

  it('leaves the text alone when the variable is already there', () => {
    expect(withEnvPrefill('API_KEY=x', 'API_KEY')).toBe('API_KEY=x');
  });
});
