import { useQueryClient } from '@tanstack/react-query';
import { routes, type ServiceType } from '@toolport/contract';
import type { ParseKeys } from 'i18next';
import { useTranslation } from 'react-i18next';
import { Button } from '../../components/ui/button';
import { Dialog, DialogContent, DialogDescription, DialogFooter, DialogHeader, DialogTitle } from '../../components/ui/dialog';
import { Input } from '../../components/ui/input';
import { Select } from '../../components/ui/select';
import { Textarea } from '../../components/ui/textarea';
import { ApiError, call } from '../../lib/api';
import { notify } from '../../lib/notify';
import { requiredEnvVarsOf, withEnvPrefill } from './create-failure';
import { showFailure } from './failure-toast';
import { FormField } from './form-field';
import { IsolationField } from './isolation-field';
import { parseKeyValueLines } from './key-values';
import { PhaseOverlay } from './phase-overlay';
import { type CustomServiceForm, emptyCustomServiceForm, hasErrors, validateCustomService } from './service-form';
import { refreshServices } from './use-installed-services';
import { useDialogForm, useSubmitPhases } from './use-submit-phases';

const serviceTypes: ServiceType[] = ['stdio', 'sse', 'streamableHttp'];

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
  return { ...base, url: form.url.trim(), headers: parseKeyValueLines(form.headers) };
}

interface CustomInstallDialogProps {
  open: boolean;
  onOpenChange(open: boolean): void;
  /** A stdio install runs on: the page polls its task (docs/console.md §4). */
  onInstallStarted(taskId: string, name: string): void;
}

/** Custom Install (docs/console.md §2.7): name, type, command and variables or URL and headers. */
export default function CustomInstallDialog({ open, onOpenChange, onInstallStarted }: CustomInstallDialogProps) {
  const { t } = useTranslation('services');
  const queryClient = useQueryClient();
  const { form, setForm, errors, setErrors, edit } = useDialogForm<CustomServiceForm, ParseKeys<'services'>>(
    open,
    () => emptyCustomServiceForm,
  );
  const { phase, busy, run } = useSubmitPhases();

  const create = async () => {
    try {
      const result = await call(routes.services.createCustom, {
        body: customServiceRequest(form),
        notify: false,
      });
      const name = result.display_name || result.name;
      void refreshServices(queryClient);
      if (result.task_id) {
        notify.success(t('install.submittedTitle'), t('install.submitted', { name }));
        onInstallStarted(result.task_id, name);
      } else if (result.health_status && result.health_status !== 'healthy') {
        // Created, but its first check found it not answering: say so, with the server's reason (issue 15).
        const reason = result.health_details || result.health_status;
        notify.warning(t('toasts.createdUnreachableTitle'), t('toasts.createdUnreachable', { name, reason }));
      } else {
        notify.success(t('toasts.createdTitle'), t('toasts.created', { name }));
      }
      onOpenChange(false);
    } catch (err) {
      const missing = requiredEnvVarsOf(err);
      if (missing.length > 0) {
        setForm((f) => ({ ...f, environments: withEnvPrefill(f.environments, missing[0] as string) }));
        const description =
          err instanceof ApiError && err.serverMessage ? err.serverMessage : t('errors.missingEnv', { names: missing.join(', ') });
        notify.error(t('toasts.createFailed'), description);
        return;
      }
      showFailure(err, t, { failed: 'toasts.createFailed', error: 'toasts.createFailed', fallback: 'errors.unknown' });
    }
  };

  const submit = () =>
    run(() => {
      const found = validateCustomService(form);
      setErrors(found);
      return !hasErrors(found);
    }, create);

  return (
    <Dialog open={open} onOpenChange={(next) => (busy && !next ? undefined : onOpenChange(next))}>
      <DialogContent className="max-w-lg" locked={busy}>
        <DialogHeader>
          <DialogTitle>{t('custom.title')}</DialogTitle>
          <DialogDescription>{t('custom.description')}</DialogDescription>
        </DialogHeader>
        <form
          noValidate
          className="space-y-4"
          onSubmit={(e) => {
            e.preventDefault();
            if (!busy) void submit();
          }}
        >
          <FormField label={t('form.name')} hint={t('form.nameHint')} error={errors.name}>
            <Input
              value={form.name}
              placeholder={t('form.namePlaceholder')}
              autoComplete="off"
              onChange={(e) => edit('name')(e.target.value)}
            />
          </FormField>
          <FormField label={t('form.type')}>
            <Select value={form.type} onChange={(e) => edit('type')(e.target.value)}>
              {serviceTypes.map((type) => (
                <option key={type} value={type}>
                  {t(`form.types.${type}`)}
                </option>
              ))}
            </Select>
          </FormField>
          {form.type === 'stdio' ? (
            <>
              <FormField label={t('form.command')} hint={t('form.commandHint')} error={errors.command}>
                <Input
                  value={form.command}
                  placeholder={t('form.commandPlaceholder')}
                  className="font-mono"
                  autoComplete="off"
                  spellCheck={false}
                  onChange={(e) => edit('command')(e.target.value)}
                />
              </FormField>
              <FormField label={t('form.environments')} hint={t('form.keyValueHint')}>
                <Textarea
                  value={form.environments}
                  placeholder={t('form.environmentsPlaceholder')}
                  className="font-mono"
                  spellCheck={false}
                  onChange={(e) => edit('environments')(e.target.value)}
                />
              </FormField>
              <IsolationField value={form.isolation} onChange={edit('isolation')} />
            </>
          ) : (
            <>
              <FormField label={t('form.url')} error={errors.url}>
                <Input
                  type="url"
                  value={form.url}
                  placeholder={t('form.urlPlaceholder')}
                  className="font-mono"
                  autoComplete="off"
                  onChange={(e) => edit('url')(e.target.value)}
                />
              </FormField>
              <FormField label={t('form.headers')} hint={t('form.keyValueHint')}>
                <Textarea
                  value={form.headers}
                  placeholder={t('form.headersPlaceholder')}
                  className="font-mono"
                  spellCheck={false}
                  onChange={(e) => edit('headers')(e.target.value)}
                />
              </FormField>
            </>
          )}
          <DialogFooter>
            <Button variant="outline" disabled={busy} onClick={() => onOpenChange(false)}>
              {t('form.cancel')}
            </Button>
            <Button type="submit" disabled={busy}>
              {t('custom.submit')}
            </Button>
          </DialogFooter>
        </form>
        <PhaseOverlay phase={phase} />
      </DialogContent>
    </Dialog>
  );
}
