import { describe, expect, it } from 'vitest';
import { emptyPackage, type LaunchPlan, type SourcePackage } from '../sources/types.js';
import { mcpConfigFor, serviceNameFor } from './mcp-config.js';

const withLaunch = (name: string, launch: LaunchPlan): SourcePackage => ({ ...emptyPackage('mcp_registry', name), launch });
const pkgLaunch = (over: Partial<Extract<LaunchPlan, { kind: 'package' }>>): LaunchPlan => ({
  kind: 'package',
  registryType: 'npm',
  identifier: 'acme-weather-mcp',
  version: '1.4.0',
  runtimeHint: '',
  runtimeArguments: [],
  packageArguments: [],
  env: [],
  ...over,
});
const key = { name: 'WEATHER_API_KEY', description: '', is_secret: true, optional: false, default_value: '' };
const units = { name: 'WEATHER_UNITS', description: '', is_secret: false, optional: true, default_value: 'metric' };

describe('mcp_config', () => {
  it('names services after the last segment of the package name', () => {
    expect(serviceNameFor('@modelcontextprotocol/server-github')).toBe('server-github');
    expect(serviceNameFor('io.github.acme/weather')).toBe('weather');
    expect(serviceNameFor('Acme.Notes_MCP')).toBe('acme-notes_mcp');
    expect(serviceNameFor('@@@')).toBe('mcp-server');
  });

  it('runs an npm package with npx at its pinned version, with every variable and its default', () => {
    expect(mcpConfigFor(withLaunch('acme-weather-mcp', pkgLaunch({})), [key, units])).toEqual({
      mcpServers: {
        'acme-weather-mcp': {
          command: 'npx',
          args: ['-y', 'acme-weather-mcp@1.4.0'],
          env: { WEATHER_API_KEY: '', WEATHER_UNITS: 'metric' },
        },
      },
    });
  });

  it('runs a PyPI package with uvx, and keeps registry arguments around the package', () => {
    const launch = pkgLaunch({
      registryType: 'pypi',
      identifier: 'acme-notes-mcp',
      version: '0.3.1',
      packageArguments: ['--dir', '/data'],
    });
    expect(mcpConfigFor(withLaunch('io.github.acme/notes', launch), []).mcpServers).toEqual({
      notes: { command: 'uvx', args: ['acme-notes-mcp@0.3.1', '--dir', '/data'] },
    });
  });

  it('runs a container image with docker run, its tag being part of the identifier', () => {
    const launch = pkgLaunch({
      registryType: 'oci',
      identifier: 'ghcr.io/acme/docker-only:0.9.0',
      runtimeHint: 'docker',
      runtimeArguments: ['-e', 'SEARCH_TOKEN'],
    });
    expect(mcpConfigFor(withLaunch('io.github.acme/docker-only', launch), []).mcpServers['docker-only']).toEqual({
      command: 'docker',
      args: ['run', '-i', '--rm', '-e', 'SEARCH_TOKEN', 'ghcr.io/acme/docker-only:0.9.0'],
    });
  });

  it('points at a remote endpoint with its headers', () => {
    const launch: LaunchPlan = {
      kind: 'remote',
      transport: 'sse',
      url: 'https://mcp.example.com/sse',
      headers: [{ name: 'Authorization', description: '', isRequired: true, isSecret: true, defaultValue: '' }],
      variables: [],
    };
    expect(mcpConfigFor(withLaunch('com.example/remote-search', launch), []).mcpServers).toEqual({
      'remote-search': { type: 'sse', url: 'https://mcp.example.com/sse', headers: { Authorization: '' } },
    });
  });

  it('is empty when the source says nothing about how to run the package', () => {
    expect(mcpConfigFor(emptyPackage('npm', 'x'), [])).toEqual({ mcpServers: {} });
  });
});
