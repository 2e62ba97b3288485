import { describe, expect, it } from 'vitest';
import { isCredentialParam, maskUrlCredentials, unmaskedUrl } from './credentials.js';

describe('credentials in remote URLs, in a masked export and back', () => {
  it('knows credential parameters by name, whatever their case or separators', () => {
    for (const name of ['key', 'api_key', 'apikey', 'API-KEY', 'x-api-key', 'token', 'access_token', 'accessToken', 'client_secret'])
      expect(isCredentialParam(name), name).toBe(true);
    for (const name of ['auth', 'password', 'pwd', 'sig', 'signature', 'tavilyApiKey', 'auth_token'])
      expect(isCredentialParam(name), name).toBe(true);
    for (const name of ['region', 'format', 'lang', 'config', 'keyword', 'tokenizer', 'page'])
      expect(isCredentialParam(name), name).toBe(false);
  });

  it('masks user info and credential values, and keeps everything else as written', () => {
    expect(maskUrlCredentials('https://mcp.example.com/mcp?key=sk-123&region=eu%20west&access_token=t1')).toBe(
      'https://mcp.example.com/mcp?key=********&region=eu%20west&access_token=********',
    );
    expect(maskUrlCredentials('https://alice:hunter2@mcp.example.com/sse')).toBe('https://********:********@mcp.example.com/sse');
    expect(maskUrlCredentials('https://ghp_token@mcp.example.com/sse')).toBe('https://********@mcp.example.com/sse');
    // Nothing to mask: the very string typed (no normalisation).
    for (const url of ['HTTPS://mcp.example.com/mcp?region=eu', 'https://mcp.example.com/mcp?key', 'not a url'])
      expect(maskUrlCredentials(url)).toBe(url);
  });

  it('leaves what was masked out of an import, and names it', () => {
    const masked = maskUrlCredentials('https://u:p@mcp.example.com/mcp?key=sk-123&region=eu&apiKey=k2');
    expect(unmaskedUrl(masked)).toEqual(['https://mcp.example.com/mcp?region=eu', ['user:password@', '?key', '?apiKey']]);
    expect(unmaskedUrl('https://mcp.example.com/mcp?key=********')).toEqual(['https://mcp.example.com/mcp', ['?key']]);
    expect(unmaskedUrl('https://mcp.example.com/mcp?key=real')).toEqual(['https://mcp.example.com/mcp?key=real', []]);
  });
});
