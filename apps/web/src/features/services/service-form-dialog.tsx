import type { ServiceType } from '@toolport/contract';
import type { ParseKeys } from 'i18next';
import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { DialogForm } from '../../components/dialog-form';
import { FormField } from '../../components/form-field';
import { PhaseOverlay } from '../../components/phase-overlay';
import { ErrorAlert } from '../../components/ui/alert';
import { Dialog, DialogContent, DialogDescription, DialogHeader, DialogTitle } from '../../components/ui/dialog';
import { Input } from '../../components/ui/input';
import { SecretLinesTextarea } from '../../components/ui/secret-lines';
import { Select } from '../../components/ui/select';
import { Textarea } from '../../components/ui/textarea';
import { refusalOf, showFailure } from '../../lib/failure';
import { useRefusalFocus } from '../../lib/use-refusal-focus';
import { useSubmitPhases } from '../../lib/use-submit-phases';
import { IsolationField } from './isolation-field';
import { type CustomServiceForm, type FieldErrors, hasErrors, type ServiceDialogState } from './service-form';

const serviceTypes: ServiceType[] = ['stdio', 'sse', 'streamableHttp', 'openapi'];

/** The fields both dialogs share: how the service is reached, and for stdio its variables and isolation. */
type SharedFields = Pick<CustomServiceForm, 'type' | 'environments' | 'url' | 'headers' | 'isolation'>;

interface ServiceFormDialogProps<F extends SharedFields> {
  open: boolean;
  onOpenChange(open: boolean): void;
  /**
   * Which dialog: Custom Install (`custom`) chooses the type and shows an example URL while the field is
   * empty; Edit (`edit`, of the service `name`) shows the type, fixed. Also the keys of the title,
   * description and submit button.
   */
  mode: 'custom' | 'edit';
  name?: string;
  /** The dialog's form, from useDialogForm. */
  state: ServiceDialogState<F>;
  /** The form's field a field of the request names, for a refusal the server blames on it (decision 0058). */
  fieldOf(serverField: string): keyof F | undefined;
  /** The field errors of the form as it is (none: it may be sent). */
  validate(form: F): FieldErrors<F>;
  /**
   * Sends the form and says it worked; runs after the validation phase. The dialog closes when it resolves,
   * stays open when it resolves `false` (it said why itself), and says why when it throws.
   */
  save(): Promise<boolean | undefined>;
  /** The fields above the type: the name (Custom Install) or display name and description (Edit). */
  children: ReactNode;
  /** The stdio command: an input (Custom Install) or the read-only command line (Edit). */
  command: ReactNode;
  /** An OpenAPI service's settings (openapi-service-fields.tsx), in place of the URL and headers. */
  openapi: ReactNode;
}

/**
 * The one service form (docs/console.md §2.7, §2.8), for Custom Install and Edit Service: the dialog, its
 * type, command, variables, isolation, URL and headers; validation then saving in the submit phases, with
 * their overlay, and no closing while busy.
 */
export function ServiceFormDialog<F extends SharedFields>(props: ServiceFormDialogProps<F>) {
  const { t } = useTranslation('services');
  const { form, errors, setErrors, edit, refusal, setRefusal, refusedFor } = props.state;
  const { phase, busy, run } = useSubmitPhases();
  const failed = props.mode === 'custom' ? 'toasts.createFailed' : 'toasts.updateFailed';
  const submit = () =>
    run(
      () => {
        const found = props.validate(form);
        setErrors(found);
        setRefusal(null);
        return !hasErrors(found);
      },
      async () => {
        try {
          if ((await props.save()) !== false) props.onOpenChange(false);
        } catch (err) {
          // The server refused what was typed: said in the dialog, beside the field it names, and the
          // input stays (decision 0058). No answer, a 403 or a 5xx is not about the input: a toast.
          const refused = refusalOf(err, props.fieldOf);
          if (refused) setRefusal(refused);
          else showFailure(err, t, { failed: t(failed), fallback: t('errors.unknown') });
        }
      },
    );
  // A refusal takes the focus once the dialog is no longer busy (Preview tools is at the bottom of the form).
  const { contentRef, alertRef } = useRefusalFocus(refusal, busy);
  // Custom Install asks for the isolation after the variables, Edit before them (docs/console.md §2.7, §2.8).
  const isolation = <IsolationField value={form.isolation} onChange={edit('isolation')} />;
  const error = (field: keyof F) => {
    const key: ParseKeys<'services'> | undefined = errors[field];
    return key ? t(key) : refusedFor(field);
  };
  // Edit shows a service's stored values: masked until revealed, as secrets elsewhere (issue 29).
  const KeyValues = props.mode === 'edit' ? SecretLinesTextarea : Textarea;
  return (
    <Dialog open={props.open} onOpenChange={(next) => (busy && !next ? undefined : props.onOpenChange(next))}>
      <DialogContent ref={contentRef} className="max-w-lg" locked={busy}>
        <DialogHeader>
          <DialogTitle>{t(`${props.mode}.title`)}</DialogTitle>
          <DialogDescription>{t(`${props.mode}.description`, { name: props.name })}</DialogDescription>
        </DialogHeader>
        <DialogForm
          busy={busy}
          onSubmit={submit}
          onCancel={() => props.onOpenChange(false)}
          cancelLabel={t('form.cancel')}
          submitLabel={t(`${props.mode}.submit`)}
        >
          {refusal && refusal.field === undefined && (
            <div ref={alertRef} tabIndex={-1} className="outline-none">
              <ErrorAlert title={refusal.title ?? t(failed)}>
                <p className="break-words">{refusal.message}</p>
              </ErrorAlert>
            </div>
          )}
          {props.children}
          <FormField label={t('form.type')}>
            {props.mode === 'edit' ? (
              <Select value={form.type} disabled>
                <option value={form.type}>{t(`form.types.${form.type}`)}</option>
              </Select>
            ) : (
              <Select value={form.type} onChange={(e) => edit('type')(e.target.value)}>
                {serviceTypes.map((type) => (
                  <option key={type} value={type}>
                    {t(`form.types.${type}`)}
                  </option>
                ))}
              </Select>
            )}
          </FormField>
          {form.type === 'stdio' ? (
            <>
              {props.command}
              {props.mode === 'edit' && isolation}
              <FormField label={t('form.environments')} hint={t('form.keyValueHint')} error={error('environments')}>
                <KeyValues
                  value={form.environments}
                  placeholder={t('form.environmentsPlaceholder')}
                  className="font-mono"
                  spellCheck={false}
                  onChange={(e) => edit('environments')(e.target.value)}
                />
              </FormField>
              {props.mode === 'custom' && isolation}
            </>
          ) : form.type === 'openapi' ? (
            props.openapi
          ) : (
            <>
              <FormField label={t('form.url')} error={error('url')}>
                <Input
                  type="url"
                  value={form.url}
                  placeholder={props.mode === 'custom' ? t('form.urlPlaceholder') : undefined}
                  className="font-mono"
                  autoComplete="off"
                  onChange={(e) => edit('url')(e.target.value)}
                />
              </FormField>
              <FormField label={t('form.headers')} hint={t('form.keyValueHint')} error={error('headers')}>
                <KeyValues
                  value={form.headers}
                  placeholder={t('form.headersPlaceholder')}
                  className="font-mono"
                  spellCheck={false}
                  onChange={(e) => edit('headers')(e.target.value)}
                />
              </FormField>
            </>
          )}
        </DialogForm>
        <PhaseOverlay phase={phase} />
      </DialogContent>
    </Dialog>
  );
}
