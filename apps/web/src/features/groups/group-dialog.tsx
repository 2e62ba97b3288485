import { useQuery, useQueryClient } from '@tanstack/react-query';
import { type Group, type GroupMode, type InstalledService, routes } from '@toolport/contract';
import { useEffect, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { DialogForm } from '../../components/dialog-form';
import { FormField } from '../../components/form-field';
import { ErrorAlert } from '../../components/ui/alert';
import { Dialog, DialogContent, DialogDescription, DialogHeader, DialogTitle } from '../../components/ui/dialog';
import { Input } from '../../components/ui/input';
import { Label } from '../../components/ui/label';
import { RadioGroup, RadioGroupItem } from '../../components/ui/radio-group';
import { Textarea } from '../../components/ui/textarea';
import { call, messageOf } from '../../lib/api';
import { type Refusal, refusalOf } from '../../lib/failure';
import { notify } from '../../lib/notify';
import { useRefusalFocus } from '../../lib/use-refusal-focus';
import { serviceTitle } from '../services';
import {
  emptyGroupForm,
  type GroupForm,
  type GroupFormErrors,
  groupFormOf,
  groupRequest,
  hasGroupErrors,
  validateGroup,
} from './group-form';
import { refreshGroups } from './use-groups';

/**
 * The tools of one chosen service (GET /api/mcp_services/{id}/tools), each by the name clients see (its alias,
 * the original name beside it); a member keeps original names. A tool switched off on the service is not offered
 * (its checkbox is disabled and says why), unless the group already has it, so that it can be taken out.
 */
function ToolPicker({
  service,
  tools,
  onChange,
}: {
  service: InstalledService;
  tools: string[] | null;
  onChange(tools: string[] | null): void;
}) {
  const { t } = useTranslation('groups');
  const id = useId();
  const list = useQuery({
    queryKey: ['services', service.id, 'tools'],
    queryFn: ({ signal }) => call(routes.services.tools, { params: { id: String(service.id) }, signal, notify: false }),
  });
  const names = list.data?.tools.filter((tool) => tool.enabled).map((tool) => tool.original_name) ?? [];
  return (
    <div className="ml-6 space-y-1.5">
      <label className="flex items-center gap-2 text-sm">
        {/* Choosing tools starts from the tools there are: not before they are listed, or nothing would be chosen. */}
        <input
          type="checkbox"
          checked={tools === null}
          disabled={tools === null && list.isPending}
          onChange={(e) => onChange(e.target.checked ? null : names)}
        />
        {t('form.wholeService')}
      </label>
      {tools !== null &&
        (list.isPending ? (
          <p className="text-xs text-slate-600 dark:text-slate-400">{t('form.toolsLoading')}</p>
        ) : list.isError ? (
          <p role="alert" className="text-xs text-red-600 dark:text-red-400">
            {messageOf(list.error, t('form.toolsFailed'))}
          </p>
        ) : (
          <fieldset aria-label={serviceTitle(service)} className="grid gap-1 sm:grid-cols-2">
            {list.data.tools.map((tool) => {
              const chosen = tools.includes(tool.original_name);
              const off = !tool.enabled;
              return (
                <label
                  key={tool.original_name}
                  htmlFor={`${id}-${tool.original_name}`}
                  className={`flex min-w-0 items-start gap-2 text-sm ${off && !chosen ? 'text-slate-600 dark:text-slate-400' : ''}`}
                >
                  <input
                    id={`${id}-${tool.original_name}`}
                    type="checkbox"
                    className="mt-0.5"
                    checked={chosen}
                    disabled={off && !chosen}
                    aria-describedby={off ? `${id}-${tool.original_name}-off` : undefined}
                    onChange={(e) =>
                      onChange(e.target.checked ? [...tools, tool.original_name] : tools.filter((n) => n !== tool.original_name))
                    }
                  />
                  <span className="min-w-0 break-words">
                    <span className="font-mono text-xs">{tool.name}</span>
                    {tool.alias && (
                      <span className="block font-mono text-xs text-slate-600 dark:text-slate-400">
                        {t('form.originalName', { name: tool.original_name })}
                      </span>
                    )}
                    {off && (
                      <span id={`${id}-${tool.original_name}-off`} className="block text-xs text-slate-600 dark:text-slate-400">
                        {t('form.toolOff')}
                      </span>
                    )}
                  </span>
                </label>
              );
            })}
          </fieldset>
        ))}
    </div>
  );
}

/** The access list's user picker: a search over GET /api/user/search, or the first page of GET /api/user/. */
function UserPicker({ userIds, onChange }: { userIds: number[]; onChange(ids: number[]): void }) {
  const { t } = useTranslation('groups');
  const [keyword, setKeyword] = useState('');
  const trimmed = keyword.trim();
  const users = useQuery({
    queryKey: ['users', 'picker', trimmed],
    queryFn: ({ signal }) =>
      trimmed
        ? call(routes.users.search, { query: { keyword: trimmed }, signal, notify: false })
        : call(routes.users.list, { query: { p: 0 }, signal, notify: false }),
  });
  return (
    <div className="ml-6 space-y-2">
      <FormField label={t('form.userSearch')}>
        <Input type="search" value={keyword} placeholder={t('form.userSearchPlaceholder')} onChange={(e) => setKeyword(e.target.value)} />
      </FormField>
      <p className="text-xs text-slate-600 dark:text-slate-400">{t('form.selectedUsers', { count: userIds.length })}</p>
      {users.isPending ? (
        <p className="text-xs text-slate-600 dark:text-slate-400">{t('form.usersLoading')}</p>
      ) : users.isError ? (
        <p role="alert" className="text-xs text-red-600 dark:text-red-400">
          {messageOf(users.error, t('form.usersFailed'))}
        </p>
      ) : users.data.length === 0 ? (
        <p className="text-xs text-slate-600 dark:text-slate-400">{t('form.noUsers')}</p>
      ) : (
        <fieldset aria-label={t('form.access')} className="max-h-40 space-y-1 overflow-auto">
          {users.data.map((user) => (
            <label key={user.id} className="flex items-center gap-2 text-sm">
              <input
                type="checkbox"
                checked={userIds.includes(user.id)}
                onChange={(e) => onChange(e.target.checked ? [...userIds, user.id] : userIds.filter((id) => id !== user.id))}
              />
              {user.display_name || user.username}
              <span className="text-xs text-slate-500 dark:text-slate-400">{user.username}</span>
            </label>
          ))}
        </fieldset>
      )}
    </div>
  );
}

/** The fields of POST/PUT /groups a refusal may name, which the dialog shows beside their own fields. */
type RefusedField = 'name' | 'separator' | 'members';
const groupFieldOf = (field: string): RefusedField | undefined =>
  field === 'name' || field === 'separator' || field === 'members' ? field : undefined;

interface GroupDialogProps {
  /** The group to edit; absent: a new group. */
  group?: Group;
  services: InstalledService[];
  open: boolean;
  onOpenChange(open: boolean): void;
}

/** All tools, or discovery: the group lists two tools, search_tools and call_tool, over the chosen ones. */
function ModeChoice({ value, onChange }: { value: GroupMode; onChange(mode: GroupMode): void }) {
  const { t } = useTranslation('groups');
  const id = useId();
  return (
    <fieldset className="space-y-2">
      <legend className="text-sm font-medium">{t('form.mode')}</legend>
      <RadioGroup value={value} onValueChange={(v) => onChange(v as GroupMode)} className="flex-col gap-2">
        {(['all', 'discovery'] as const).map((mode) => {
          const label = mode === 'all' ? 'form.modeAll' : 'form.modeDiscovery';
          const hint = mode === 'all' ? 'form.modeAllHint' : 'form.modeDiscoveryHint';
          return (
            <div key={mode} className="flex items-start gap-2">
              <RadioGroupItem id={`${id}-${mode}`} value={mode} aria-describedby={`${id}-${mode}-hint`} className="mt-0.5" />
              <div>
                <Label htmlFor={`${id}-${mode}`} className="font-normal">
                  {t(label)}
                </Label>
                <p id={`${id}-${mode}-hint`} className="text-xs text-slate-600 dark:text-slate-400">
                  {t(hint)}
                </p>
              </div>
            </div>
          );
        })}
      </RadioGroup>
    </fieldset>
  );
}

/**
 * Create or edit a group (docs/console.md §2.9b). The console checks the name, separator and that every chosen
 * service has tools; the server's own 400/409 (unknown tool, name collision, name taken) shows inline, in the
 * language of the request, and the form keeps what was typed.
 */
export default function GroupDialog({ group, services, open, onOpenChange }: GroupDialogProps) {
  const { t } = useTranslation('groups');
  const queryClient = useQueryClient();
  const [form, setForm] = useState<GroupForm>(() => (group ? groupFormOf(group) : emptyGroupForm()));
  const [errors, setErrors] = useState<GroupFormErrors>({});
  const [serverError, setServerError] = useState<Refusal<RefusedField> | null>(null);
  const [busy, setBusy] = useState(false);
  // A refusal of the server takes the focus, beside its field or above the form, as in the service dialogs.
  const { contentRef, alertRef } = useRefusalFocus(serverError, busy);

  // Each opening starts from the group as it is now (or blank), not from what the last opening left.
  useEffect(() => {
    if (!open) return;
    setForm(group ? groupFormOf(group) : emptyGroupForm());
    setErrors({});
    setServerError(null);
  }, [open, group]);

  // Editing a field takes back what was said about it, by the console or by the server.
  const clear = (field: RefusedField) => {
    setErrors(({ [field]: _cleared, ...rest }) => rest);
    setServerError((r) => (r?.field === field ? null : r));
  };
  const edit = <K extends keyof GroupForm>(key: K, value: GroupForm[K]) => {
    setForm((f) => ({ ...f, [key]: value }));
    if (key === 'name' || key === 'separator') clear(key);
  };
  const setMember = (id: number, tools: string[] | null | undefined) => {
    // Choosing a service answers "choose at least one service"; a tool chosen answers "no tools" for it.
    if (tools !== undefined) clear('members');
    if (tools?.length !== 0) setErrors(({ emptyServiceId, ...rest }) => (emptyServiceId === id ? rest : { ...rest, emptyServiceId }));
    setForm((f) => {
      const members = { ...f.members };
      if (tools === undefined) delete members[id];
      else members[id] = tools;
      return { ...f, members };
    });
  };

  const submit = async () => {
    const found = validateGroup(form);
    setErrors(found);
    setServerError(null);
    if (hasGroupErrors(found)) return;
    setBusy(true);
    try {
      const body = groupRequest(
        form,
        services.map((s) => s.id),
      );
      if (group) await call(routes.groups.update, { params: { id: String(group.id) }, body, notify: false });
      else await call(routes.groups.create, { body, notify: false });
      notify.success(group ? t('form.saved') : t('form.created'));
      await refreshGroups(queryClient);
      onOpenChange(false);
    } catch (err) {
      // A refusal about one field is said beside it; any other failure above the form (decision 0058).
      setServerError(refusalOf(err, groupFieldOf) ?? { message: messageOf(err, t('form.failed')) });
    } finally {
      setBusy(false);
    }
  };

  const refused = (field: RefusedField) => (serverError?.field === field ? serverError.message : undefined);
  // A member whose service is gone from the installed list is still named, by its id.
  const emptyService =
    errors.emptyServiceId === undefined
      ? undefined
      : (services.find((s) => s.id === errors.emptyServiceId) ?? { name: `#${errors.emptyServiceId}`, display_name: '' });
  return (
    <Dialog open={open} onOpenChange={(next) => (busy && !next ? undefined : onOpenChange(next))}>
      <DialogContent ref={contentRef} className="max-h-[90dvh] max-w-2xl overflow-y-auto" locked={busy}>
        <DialogHeader>
          <DialogTitle>{group ? t('form.editTitle') : t('form.createTitle')}</DialogTitle>
          <DialogDescription>{t('form.descriptionText')}</DialogDescription>
        </DialogHeader>
        <DialogForm
          busy={busy}
          onSubmit={submit}
          onCancel={() => onOpenChange(false)}
          cancelLabel={t('form.cancel')}
          submitLabel={group ? t('form.save') : t('form.create')}
        >
          {serverError && serverError.field === undefined && (
            <div ref={alertRef} tabIndex={-1} className="outline-none">
              <ErrorAlert title={t('form.failed')}>
                <p>{serverError.message}</p>
              </ErrorAlert>
            </div>
          )}
          <FormField label={t('form.name')} hint={t('form.nameHint')} error={errors.name ? t(errors.name) : refused('name')}>
            <Input value={form.name} autoComplete="off" className="font-mono" onChange={(e) => edit('name', e.target.value)} />
          </FormField>
          <FormField label={t('form.displayName')}>
            <Input value={form.displayName} autoComplete="off" onChange={(e) => edit('displayName', e.target.value)} />
          </FormField>
          <FormField label={t('form.description')}>
            <Textarea value={form.description} onChange={(e) => edit('description', e.target.value)} />
          </FormField>
          <ModeChoice value={form.mode} onChange={(mode) => edit('mode', mode)} />
          <FormField
            label={t('form.separator')}
            hint={t('form.separatorHint')}
            error={errors.separator ? t(errors.separator) : refused('separator')}
          >
            <Input
              value={form.separator}
              autoComplete="off"
              className="w-32 font-mono"
              onChange={(e) => edit('separator', e.target.value)}
            />
          </FormField>
          <fieldset className="space-y-2">
            <legend className="text-sm font-medium">{t('form.members')}</legend>
            <p className="text-xs text-slate-600 dark:text-slate-400">{t('form.membersHint')}</p>
            {services.length === 0 && <p className="text-sm">{t('form.noServices')}</p>}
            {services.map((service) => {
              const chosen = service.id in form.members;
              return (
                <div key={service.id} className="space-y-1.5">
                  <label className="flex items-center gap-2 text-sm font-medium">
                    <input type="checkbox" checked={chosen} onChange={(e) => setMember(service.id, e.target.checked ? null : undefined)} />
                    {/* A service's name is data, in whatever language it was given. */}
                    <span data-i18n-data="">{serviceTitle(service)}</span>
                  </label>
                  {chosen && (
                    <ToolPicker
                      service={service}
                      tools={form.members[service.id] ?? null}
                      onChange={(tools) => setMember(service.id, tools)}
                    />
                  )}
                </div>
              );
            })}
            {(errors.members || refused('members')) && (
              <p
                role="alert"
                tabIndex={-1}
                {...(refused('members') ? { 'data-refusal': '' } : {})}
                className="text-xs font-medium text-red-600 outline-none dark:text-red-400"
              >
                {errors.members ? t(errors.members) : refused('members')}
              </p>
            )}
            {emptyService && (
              <p role="alert" className="text-xs font-medium text-red-600 dark:text-red-400">
                {t('form.errors.toolsRequired', { name: serviceTitle(emptyService) })}
              </p>
            )}
          </fieldset>
          <fieldset className="space-y-2">
            <legend className="text-sm font-medium">{t('form.access')}</legend>
            <p className="text-xs text-slate-600 dark:text-slate-400">{t('form.accessHint')}</p>
            <label className="flex items-center gap-2 text-sm">
              <input type="checkbox" checked={form.restricted} onChange={(e) => edit('restricted', e.target.checked)} />
              {t('form.restricted')}
            </label>
            {form.restricted && <UserPicker userIds={form.userIds} onChange={(ids) => edit('userIds', ids)} />}
          </fieldset>
        </DialogForm>
      </DialogContent>
    </Dialog>
  );
}
