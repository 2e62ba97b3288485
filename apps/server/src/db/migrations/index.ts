import type { Migration } from 'kysely';
import * as m0001 from './0001_initial.js';
import * as m0002 from './0002_oauth_states.js';
import * as m0003 from './0003_history.js';
import * as m0004 from './0004_personal_switches.js';
import * as m0005 from './0005_groups_tools_access.js';
import * as m0006 from './0006_oauth_server.js';
import * as m0007 from './0007_upstream_oauth.js';
import * as m0008 from './0008_meter_batches.js';
import * as m0009 from './0009_typed_commands.js';
import * as m0010 from './0010_meter_contributions.js';
import * as m0011 from './0011_tool_embeddings.js';
import * as m0012 from './0012_audit_entries.js';
import * as m0013 from './0013_openapi_services.js';
import * as m0014 from './0014_identity_links.js';
import * as m0015 from './0015_personal_checks.js';

/** Static index: the bundled server cannot read a migrations folder at run time. */
export const migrations: Record<string, Migration> = {
  '0001_initial': m0001,
  '0002_oauth_states': m0002,
  '0003_history': m0003,
  '0004_personal_switches': m0004,
  '0005_groups_tools_access': m0005,
  '0006_oauth_server': m0006,
  '0007_upstream_oauth': m0007,
  '0008_meter_batches': m0008,
  '0009_typed_commands': m0009,
  '0010_meter_contributions': m0010,
  '0011_tool_embeddings': m0011,
  '0012_audit_entries': m0012,
  '0013_openapi_services': m0013,
  '0014_identity_links': m0014,
  '0015_personal_checks': m0015,
};
