import { GROUP_NAME, GROUP_SEPARATOR, type Group, type GroupInput, type GroupMode } from '@toolport/contract';
import type { ParseKeys } from 'i18next';

/** A chosen service: `null` tools means the whole service, with the tools it gains later. */
export type MemberChoice = Record<number, string[] | null>;

export interface GroupForm {
  name: string;
  displayName: string;
  description: string;
  /** `all`: every chosen tool; `discovery`: two tools, search_tools and call_tool, over them. */
  mode: GroupMode;
  separator: string;
  members: MemberChoice;
  restricted: boolean;
  userIds: number[];
}

export type GroupFormErrors = Partial<Record<'name' | 'separator' | 'members', ParseKeys<'groups'>>> & {
  /** The service whose tool list is empty (neither "all" nor any tool). */
  emptyServiceId?: number;
};

export const emptyGroupForm = (): GroupForm => ({
  name: '',
  displayName: '',
  description: '',
  mode: 'all',
  separator: '__',
  members: {},
  restricted: false,
  userIds: [],
});

export function groupFormOf(group: Group): GroupForm {
  const members: MemberChoice = {};
  for (const m of group.members) members[m.service_id] = m.tools ?? null;
  return {
    name: group.name,
    displayName: group.display_name,
    description: group.description,
    mode: group.mode,
    separator: group.separator,
    members,
    restricted: group.access.restricted,
    userIds: group.access.user_ids,
  };
}

/** The checks the console can make itself; the server checks the rest (unknown tools, collisions, names taken). */
export function validateGroup(form: GroupForm): GroupFormErrors {
  const errors: GroupFormErrors = {};
  const name = form.name.trim();
  if (!name) errors.name = 'form.errors.nameRequired';
  else if (!GROUP_NAME.test(name)) errors.name = 'form.errors.nameInvalid';
  if (!GROUP_SEPARATOR.test(form.separator)) errors.separator = 'form.errors.separatorInvalid';
  const chosen = Object.entries(form.members);
  if (chosen.length === 0) errors.members = 'form.errors.membersRequired';
  const empty = chosen.find(([, tools]) => tools !== null && tools.length === 0);
  if (empty) errors.emptyServiceId = Number(empty[0]);
  return errors;
}

export const hasGroupErrors = (errors: GroupFormErrors): boolean =>
  Boolean(errors.name || errors.separator || errors.members || errors.emptyServiceId !== undefined);

/** The body of POST /groups and PUT /groups/{id}; members keep the order the services are listed in. */
export function groupRequest(form: GroupForm, serviceOrder: number[]): GroupInput {
  const ids = Object.keys(form.members).map(Number);
  ids.sort((a, b) => serviceOrder.indexOf(a) - serviceOrder.indexOf(b));
  return {
    name: form.name.trim(),
    display_name: form.displayName.trim(),
    description: form.description.trim(),
    mode: form.mode,
    separator: form.separator,
    members: ids.map((id) => {
      const tools = form.members[id];
      return tools ? { service_id: id, tools } : { service_id: id };
    }),
    access: { restricted: form.restricted, user_ids: form.restricted ? form.userIds : [] },
  };
}
