import { useQueryClient } from '@tanstack/react-query';
import { routes, SERVICE_NAME_PATTERN } from '@toolport/contract';
import type { ParseKeys, TFunction } from 'i18next';
import { useTranslation } from 'react-i18next';
import { FormField } from '../../components/form-field';
import { Input } from '../../components/ui/input';
import { ApiError, call } from '../../lib/api';
import { refreshServices } from '../../lib/installed-services';
import { notify } from '../../lib/notify';
import { useDialogForm } from '../../lib/use-submit-phases';
import { requiredEnvVarsOf, withEnvPrefill } from '../installs';
import { parseKeyValueLines } from './key-values';
import { credentialsOf, documentRequestOf } from './openapi-form';
import { OpenApiServiceFields, openApiFieldOf, openApiRefusalOf } from './openapi-service-fields';
import { type CustomServiceForm, emptyCustomServiceForm, validateCustomService } from './service-form';
import { ServiceFormDialog } from './service-form-dialog';

/** The body of POST /mcp_market/custom_service: only the fields of the chosen type, KEY=VALUE lines parsed. */
export function customServiceRequest(form: CustomServiceForm) {
  const base = { name: form.name.trim(), type: form.type };
  if (form.type === 'stdio')
    return {
      ...base,
      command: form.command.trim(),
      environments: parseKeyValueLines(form.environments),
      ...(form.isolation === 'session' ? { isolation: form.isolation } : {}),
    };
  if (form.type === 'openapi') return { ...base, ...documentRequestOf(form), ...credentialsOf(form) };
  return { ...base, url: form.url.trim(), headers: parseKeyValueLines(form.headers) };
}

/**
 * The form's field a field of POST /mcp_market/custom_service names in a refusal (decision 0058); `command`
 * is the URL's old name for a remote service.
 */
export function customFieldOf(
  field: string,
  form: Pick<CustomServiceForm, 'type' | 'source' | 'tags' | 'paths' | 'operationIds'>,
): keyof CustomServiceForm | undefined {
  // An OpenAPI service shows its name, its document's URL (when given by URL), base URL and filter, not the others.
  if (form.type === 'openapi') return field === 'name' || (field === 'url' && form.source === 'url') ? field : openApiFieldOf(field, form);
  if (field === 'command') return form.type === 'stdio' ? 'command' : 'url';
  return (['name', 'environments', 'url', 'headers', 'isolation'] as const).find((f) => f === field);
}

interface CustomInstallDialogProps {
  open: boolean;
  onOpenChange(open: boolean): void;
  /** A stdio install runs on: the page polls its task (docs/console.md §4). */
  onInstallStarted(taskId: string, name: string): void;
}

/**
 * The name field's hint: a name that cannot be an address (all Chinese, spaces) is kept as the display name, and
 * the hint says where the endpoint's name will come from; the answer names it (decision 0054).
 */
export function nameHintOf(form: Pick<CustomServiceForm, 'name' | 'type'>, t: TFunction<'services'>): string {
  const name = form.name.trim();
  if (!name || SERVICE_NAME_PATTERN.test(name)) return t('form.nameHint');
  if (form.type === 'openapi') return t('form.nameDerived', { name });
  return t(form.type === 'stdio' ? 'form.nameDerivedFromPackage' : 'form.nameDerivedFromHost', { name });
}

/** Custom Install (docs/console.md §2.7): name, type, command and variables or URL and headers. */
export default function CustomInstallDialog({ open, onOpenChange, onInstallStarted }: CustomInstallDialogProps) {
  const { t } = useTranslation('services');
  const queryClient = useQueryClient();
  const state = useDialogForm<CustomServiceForm, ParseKeys<'services'>>(open, () => emptyCustomServiceForm);
  const { form, setForm, errors, edit, setRefusal, refusedFor } = state;
  const fieldOf = (field: string) => customFieldOf(field, form);

  const create = async () => {
    try {
      const result = await call(routes.services.createCustom, {
        body: customServiceRequest(form),
        notify: false,
      });
      const name = result.display_name || result.name;
      // The name given could not be an address: say which endpoint name it got, and why (decision 0054).
      const derived = result.endpoint_name_derived ? t('toasts.endpointDerived', { endpoint: result.name, name: result.display_name }) : '';
      const withDerived = (text: string) => (derived ? t('toasts.withNote', { text, note: derived }) : text);
      void refreshServices(queryClient);
      if (result.task_id) {
        notify.success(t('install.submittedTitle'), withDerived(t('install.submitted', { name })));
        onInstallStarted(result.task_id, name);
      } else if (result.health_status && result.health_status !== 'healthy') {
        // Created, but its first check found it not answering: say so, with the server's reason (issue 15).
        const reason = result.health_details || result.health_status;
        notify.warning(t('toasts.createdUnreachableTitle'), withDerived(t('toasts.createdUnreachable', { name, reason })));
      } else {
        notify.success(t('toasts.createdTitle'), withDerived(t('toasts.created', { name })));
      }
      return true;
    } catch (err) {
      // An OpenAPI document refused (it does not parse, has no operations, …): said beside it, the form kept.
      const refused = form.type === 'openapi' ? openApiRefusalOf(err, form, fieldOf, t) : null;
      if (refused) {
        setRefusal(refused);
        return false;
      }
      const missing = requiredEnvVarsOf(err);
      if (missing.length === 0) throw err;
      // The server named the variables it needs: the first is put in the form for the user to fill in.
      setForm((f) => ({ ...f, environments: withEnvPrefill(f.environments, missing[0] as string) }));
      const message =
        err instanceof ApiError && err.serverMessage ? err.serverMessage : t('errors.missingEnv', { names: missing.join(', ') });
      setRefusal({ field: 'environments', message });
      return false;
    }
  };

  return (
    <ServiceFormDialog
      open={open}
      onOpenChange={onOpenChange}
      mode="custom"
      state={state}
      validate={validateCustomService}
      fieldOf={fieldOf}
      save={create}
      openapi={<OpenApiServiceFields state={state} validate={validateCustomService} />}
      command={
        <FormField
          label={t('form.command')}
          hint={t('form.commandHint')}
          error={errors.command ? t(errors.command) : refusedFor('command')}
        >
          <Input
            value={form.command}
            placeholder={t('form.commandPlaceholder')}
            className="font-mono"
            autoComplete="off"
            spellCheck={false}
            onChange={(e) => edit('command')(e.target.value)}
          />
        </FormField>
      }
    >
      <FormField label={t('form.name')} hint={nameHintOf(form, t)} error={errors.name ? t(errors.name) : refusedFor('name')}>
        <Input
          value={form.name}
          placeholder={t('form.namePlaceholder')}
          autoComplete="off"
          onChange={(e) => edit('name')(e.target.value)}
        />
      </FormField>
    </ServiceFormDialog>
  );
}
