import { useQueryClient } from '@tanstack/react-query';
import { type InstalledService, routes, SERVICE_NAME_PATTERN } from '@toolport/contract';
import type { ParseKeys, TFunction } from 'i18next';
import { useTranslation } from 'react-i18next';
import { FormField } from '../../components/form-field';
import { Input } from '../../components/ui/input';
import { Textarea } from '../../components/ui/textarea';
import { call } from '../../lib/api';
import { refreshServices } from '../../lib/installed-services';
import { notify } from '../../lib/notify';
import { integerIdOf } from '../../lib/service-ids';
import { useDialogForm } from '../../lib/use-submit-phases';
import { formatKeyValueLines, parseJsonObject, parseKeyValueLines } from './key-values';
import { credentialsOf, documentRequestOf, emptyOpenApiFields, openApiFieldsOf, otherCredentialsOf } from './openapi-form';
import { OpenApiServiceFields, openApiFieldOf, openApiRefusalOf } from './openapi-service-fields';
import { type EditServiceForm, validateEditService } from './service-form';
import { ServiceFormDialog } from './service-form-dialog';
import { commandLineOf } from './stdio-command';

export function editFormOf(service: InstalledService): EditServiceForm {
  const remote = service.type !== 'stdio';
  const openapi = service.type === 'openapi' ? openApiFieldsOf(service) : undefined;
  return {
    displayName: service.display_name || service.name,
    description: service.description,
    type: service.type,
    environments: formatKeyValueLines(parseJsonObject(service.default_envs_json)),
    url: openapi ? openapi.url : remote ? service.command : '',
    headers: remote ? formatKeyValueLines(parseJsonObject(service.headers_json)) : '',
    isolation: service.isolation,
    ...(openapi ? openapi.fields : emptyOpenApiFields),
    uploadKept: service.openapi?.uploaded === true,
  };
}

/**
 * The body of PUT /mcp_services/{id}: variables for stdio, URL (as `command`) and headers for the others; for an
 * OpenAPI service its document (the URL as `command`, or a newly chosen file), base URL, filter and credentials
 * (the scheme's, beside the others it has, unchanged).
 */
export function updateServiceRequest(form: EditServiceForm, service?: InstalledService) {
  const base = { display_name: form.displayName.trim(), description: form.description.trim() };
  if (form.type === 'stdio')
    return { ...base, default_envs_json: JSON.stringify(parseKeyValueLines(form.environments)), isolation: form.isolation };
  if (form.type === 'openapi') {
    const source = documentRequestOf(form);
    const { headers, environments } = credentialsOf(form, service ? otherCredentialsOf(service) : undefined);
    return {
      ...base,
      base_url: source.base_url,
      operation_filter: source.operation_filter,
      // The uploaded document stays while no other file was chosen: no URL, no text.
      command: 'url' in source ? source.url : '',
      ...('document' in source && source.document ? { document: source.document } : {}),
      headers_json: JSON.stringify(headers),
      default_envs_json: JSON.stringify(environments),
    };
  }
  return { ...base, command: form.url.trim(), headers_json: JSON.stringify(parseKeyValueLines(form.headers)) };
}

/**
 * Where the endpoint's name came from: a display name that cannot be an address (all Chinese, spaces) gave way to
 * a name derived from the package, the executable or the URL host (decision 0054); the dialog says so.
 */
export function endpointHintOf(service: Pick<InstalledService, 'name' | 'display_name' | 'type'>, t: TFunction<'services'>): string {
  const shown = service.display_name.trim();
  if (shown && shown !== service.name && !SERVICE_NAME_PATTERN.test(shown) && service.type === 'openapi')
    return t('form.endpointDerived', { endpoint: service.name, name: shown });
  if (shown && shown !== service.name && !SERVICE_NAME_PATTERN.test(shown))
    return t(service.type === 'stdio' ? 'form.endpointDerivedFromPackage' : 'form.endpointDerivedFromHost', {
      endpoint: service.name,
      name: shown,
    });
  return t('form.endpointNameHint', { endpoint: service.name });
}

/** The form's field of each field of PUT /mcp_services/{id} a refusal may name (decision 0058). */
const editFields: Record<string, keyof EditServiceForm> = {
  display_name: 'displayName',
  description: 'description',
  command: 'url',
  headers_json: 'headers',
  default_envs_json: 'environments',
  isolation: 'isolation',
};
/**
 * An OpenAPI service shows its names, its document's URL (when given by URL), base URL and filter, not the headers and
 * variables.
 */
export function editFieldOf(
  field: string,
  form: Pick<EditServiceForm, 'type' | 'source' | 'tags' | 'paths' | 'operationIds'>,
): keyof EditServiceForm | undefined {
  const found = editFields[field];
  if (form.type !== 'openapi') return found;
  if (found === 'displayName' || found === 'description' || (found === 'url' && form.source === 'url')) return found;
  return openApiFieldOf(field, form);
}

interface EditServiceDialogProps {
  service: InstalledService;
  open: boolean;
  onOpenChange(open: boolean): void;
}

/** Edit Service (docs/console.md §2.8): type and stdio command line are shown but not editable. */
export default function EditServiceDialog({ service, open, onOpenChange }: EditServiceDialogProps) {
  const { t } = useTranslation('services');
  const queryClient = useQueryClient();
  const state = useDialogForm<EditServiceForm, ParseKeys<'services'>>(open, () => editFormOf(service));
  const { form, errors, edit, refusedFor } = state;
  const name = service.display_name || service.name;
  const fieldOf = (field: string) => editFieldOf(field, form);

  const save = async () => {
    try {
      await call(routes.services.update, {
        params: { id: integerIdOf(service.id) },
        body: updateServiceRequest(form, service),
        notify: false,
      });
    } catch (err) {
      // An OpenAPI document refused: said beside it, the form kept as typed.
      const refused = form.type === 'openapi' ? openApiRefusalOf(err, form, fieldOf, t) : null;
      if (!refused) throw err;
      state.setRefusal(refused);
      return false;
    }
    notify.success(t('toasts.updateSuccessful'), t('toasts.updateSuccessfulDescription', { name: form.displayName.trim() }));
    await refreshServices(queryClient);
    return true;
  };

  return (
    <ServiceFormDialog
      open={open}
      onOpenChange={onOpenChange}
      mode="edit"
      name={name}
      state={state}
      validate={validateEditService}
      fieldOf={fieldOf}
      save={save}
      openapi={
        <OpenApiServiceFields
          state={state}
          validate={validateEditService}
          editing
          uploadedTitle={
            form.uploadKept && !form.fileName ? [service.openapi?.title, service.openapi?.version].filter(Boolean).join(' ') : undefined
          }
        />
      }
      command={
        <FormField label={t('form.commandLine')}>
          <Input readOnly value={commandLineOf(service.command, service.args_json)} className="font-mono text-xs" />
        </FormField>
      }
    >
      <FormField label={t('form.endpointName')} hint={endpointHintOf(service, t)}>
        <Input readOnly value={service.name} className="font-mono" />
      </FormField>
      <FormField label={t('form.displayName')} error={errors.displayName ? t(errors.displayName) : refusedFor('displayName')}>
        <Input value={form.displayName} autoComplete="off" onChange={(e) => edit('displayName')(e.target.value)} />
      </FormField>
      <FormField label={t('form.description')}>
        <Textarea value={form.description} onChange={(e) => edit('description')(e.target.value)} />
      </FormField>
    </ServiceFormDialog>
  );
}
