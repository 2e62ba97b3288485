import { type OpenApiToolPreview, routes } from '@toolport/contract';
import type { ParseKeys } from 'i18next';
import { useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { FormField } from '../../components/form-field';
import { ErrorAlert } from '../../components/ui/alert';
import { Button } from '../../components/ui/button';
import { Input } from '../../components/ui/input';
import { Label } from '../../components/ui/label';
import { PasswordInput } from '../../components/ui/password-input';
import { RadioGroup, RadioGroupItem } from '../../components/ui/radio-group';
import { Select } from '../../components/ui/select';
import { Spinner } from '../../components/ui/spinner';
import { ApiError, call } from '../../lib/api';
import { failureText } from '../../lib/failure';
import { useResetAfterClose } from '../../lib/use-submit-phases';
import { documentRequestOf, type OpenApiAuth, type OpenApiFields, openApiAuths, readDocumentFile, SECRET_MASK } from './openapi-form';
import type { FieldErrors } from './service-form';

type Form = OpenApiFields & { url: string };

/**
 * The server's refusal of an OpenAPI document, shown in the dialog (its create or save, and the preview) with the
 * form kept as typed. A refusal is a 4xx with the server's localised message; anything else (no answer, a 403 or
 * 5xx) goes to the dialog's usual failure toast.
 */
export function useOpenApiRefusal(open: boolean) {
  const [refusal, setRefusal] = useState<string>();
  // The document (or an address it names) refused, or another of the request's fields (a name taken, say).
  const [ofDocument, setOfDocument] = useState(true);
  useResetAfterClose(open, () => setRefusal(undefined));
  /** True when `err` was a refusal, now shown; false when the caller should report it as usual. */
  const show = (err: unknown): boolean => {
    if (!(err instanceof ApiError) || err.kind !== 'other' || !err.serverMessage) return false;
    setOfDocument(err.code === 'openapi_refused' || err.code === 'address_refused');
    setRefusal(err.serverMessage);
    return true;
  };
  /** A failure that is no refusal (no answer, a server error), said in the same place. */
  const showOther = (text: string) => {
    setOfDocument(false);
    setRefusal(text);
  };
  return { refusal, ofDocument, setRefusal, show, showOther };
}

interface PreviewResult {
  /** The request it answered, so that a changed form no longer shows it. */
  key: string;
  tools: OpenApiToolPreview[];
  baseUrl: string;
}

interface OpenApiServiceFieldsProps<F extends Form> {
  state: { form: F; errors: FieldErrors<F>; setErrors(errors: FieldErrors<F>): void; edit(field: keyof F): (value: string) => void };
  /** The form's own OpenAPI checks (a file, valid URLs, the scheme's fields), run before a preview. */
  validate(form: F): FieldErrors<F>;
  refusal: ReturnType<typeof useOpenApiRefusal>;
  /** Edit: the title of the uploaded document the service runs, while no other file is chosen. */
  uploadedTitle?: string | undefined;
  /** Edit: a stored secret is shown as the mask. */
  editing?: boolean;
}

/**
 * An OpenAPI service's settings in the custom and edit dialogs (docs/console.md §2.7, §2.8, docs/openapi.md): the
 * document by URL or file, the base URL override, one authentication scheme, the operation filter, and Preview
 * tools, which asks the server to compile the document and lists the tools it makes, creating nothing.
 */
export function OpenApiServiceFields<F extends Form>({ state, validate, refusal, uploadedTitle, editing }: OpenApiServiceFieldsProps<F>) {
  const { t } = useTranslation('services');
  const id = useId();
  const { form, errors, setErrors, edit } = state;
  const [preview, setPreview] = useState<PreviewResult>();
  const [previewing, setPreviewing] = useState(false);
  const request = documentRequestOf(form);
  const key = JSON.stringify(request);
  const error = (field: keyof Form) => {
    const found: ParseKeys<'services'> | undefined = errors[field as keyof F];
    return found && t(found);
  };
  const field = (name: keyof Form) => edit(name as keyof F);

  const runPreview = async () => {
    const found = validate(form);
    const documentErrors = (['url', 'fileName', 'baseUrl'] as const).filter((k) => found[k as keyof F]);
    if (documentErrors.length) {
      setErrors(found);
      return;
    }
    setPreviewing(true);
    refusal.setRefusal(undefined);
    try {
      const result = await call(routes.services.createCustom, {
        body: { name: '', type: 'openapi', ...request, preview: true },
        notify: false,
      });
      setPreview({ key, tools: result.tools ?? [], baseUrl: result.base_url ?? '' });
    } catch (err) {
      setPreview(undefined);
      if (!refusal.show(err)) refusal.showOther(failureText(err, t));
    } finally {
      setPreviewing(false);
    }
  };

  const chooseFile = async (file: File | undefined) => {
    if (!file) return;
    const read = await readDocumentFile(file);
    if ('error' in read) {
      field('document')('');
      field('fileName')('');
      setErrors({ ...errors, fileName: read.error });
      return;
    }
    field('document')(read.text);
    field('fileName')(file.name);
  };
  const fileName = form.fileName;
  const fileSize = Math.max(1, Math.round(form.document.length / 1024));
  // A new scheme or name makes a shown mask meaningless (the server keeps a stored value by its name).
  const credential = (name: 'auth' | 'authName') => (value: string) => {
    field(name)(value);
    if (form.secret === SECRET_MASK) field('secret')('');
  };
  const secretLabel: Record<Exclude<OpenApiAuth, 'none'>, ParseKeys<'services'>> = {
    header: 'form.openapi.value',
    query: 'form.openapi.value',
    bearer: 'form.openapi.token',
    basic: 'form.openapi.password',
  };
  const shown = preview && preview.key === key ? preview : undefined;

  return (
    <>
      <fieldset className="space-y-2">
        <legend className="text-sm font-medium">{t('form.openapi.source')}</legend>
        <RadioGroup value={form.source} onValueChange={(v) => field('source')(v === 'file' ? 'file' : 'url')}>
          {(['url', 'file'] as const).map((source) => (
            <div key={source} className="flex items-center gap-2">
              <RadioGroupItem id={`${id}-${source}`} value={source} />
              <Label htmlFor={`${id}-${source}`} className="font-normal">
                {t(`form.openapi.sources.${source}`)}
              </Label>
            </div>
          ))}
        </RadioGroup>
      </fieldset>
      {form.source === 'url' ? (
        <FormField label={t('form.openapi.documentUrl')} error={error('url')}>
          <Input
            key="url"
            type="url"
            value={form.url}
            placeholder={t('form.openapi.documentUrlPlaceholder')}
            className="font-mono"
            autoComplete="off"
            onChange={(e) => field('url')(e.target.value)}
          />
        </FormField>
      ) : (
        <FormField
          label={t('form.openapi.file')}
          hint={
            fileName
              ? t('form.openapi.fileChosen', { name: fileName, size: fileSize })
              : uploadedTitle !== undefined
                ? t('form.openapi.uploadKept', { title: uploadedTitle })
                : t('form.openapi.fileHint')
          }
          error={error('fileName')}
        >
          <Input
            key="file"
            type="file"
            accept=".json,.yaml,.yml,application/json,application/yaml,text/yaml"
            className="file:mr-3 file:border-0 file:bg-transparent file:text-sm file:font-medium"
            onChange={(e) => void chooseFile(e.target.files?.[0])}
          />
        </FormField>
      )}
      <FormField label={t('form.openapi.baseUrl')} hint={t('form.openapi.baseUrlHint')} error={error('baseUrl')}>
        <Input
          type="url"
          value={form.baseUrl}
          placeholder={t('form.openapi.baseUrlPlaceholder')}
          className="font-mono"
          autoComplete="off"
          onChange={(e) => field('baseUrl')(e.target.value)}
        />
      </FormField>
      <FormField label={t('form.openapi.auth')}>
        <Select value={form.auth} onChange={(e) => credential('auth')(e.target.value)}>
          {openApiAuths.map((auth) => (
            <option key={auth} value={auth}>
              {t(`form.openapi.auths.${auth}`)}
            </option>
          ))}
        </Select>
      </FormField>
      {(form.auth === 'header' || form.auth === 'query') && (
        <FormField label={t(form.auth === 'header' ? 'form.openapi.headerName' : 'form.openapi.queryName')} error={error('authName')}>
          <Input
            value={form.authName}
            placeholder={t(form.auth === 'header' ? 'form.openapi.headerNamePlaceholder' : 'form.openapi.queryNamePlaceholder')}
            className="font-mono"
            autoComplete="off"
            spellCheck={false}
            onChange={(e) => credential('authName')(e.target.value)}
          />
        </FormField>
      )}
      {form.auth === 'basic' && (
        <FormField label={t('form.openapi.username')} error={error('username')}>
          <Input value={form.username} autoComplete="off" spellCheck={false} onChange={(e) => field('username')(e.target.value)} />
        </FormField>
      )}
      {form.auth !== 'none' && (
        <FormField
          label={t(secretLabel[form.auth])}
          hint={t(editing && form.secret === SECRET_MASK ? 'form.openapi.secretKept' : 'form.openapi.secretHint')}
          error={error('secret')}
        >
          <PasswordInput
            value={form.secret}
            autoComplete="new-password"
            spellCheck={false}
            onFocus={(e) => e.currentTarget.select()}
            onChange={(e) => field('secret')(e.target.value)}
          />
        </FormField>
      )}
      <fieldset className="space-y-2">
        <legend className="text-sm font-medium">{t('form.openapi.filter')}</legend>
        <p className="text-xs text-slate-600 dark:text-slate-400">{t('form.openapi.filterHint')}</p>
        {(
          [
            ['tags', 'form.openapi.tags'],
            ['paths', 'form.openapi.paths'],
            ['operationIds', 'form.openapi.operationIds'],
          ] as const
        ).map(([name, label]) => (
          <FormField key={name} label={t(label)}>
            <Input
              value={form[name]}
              className="font-mono"
              autoComplete="off"
              spellCheck={false}
              onChange={(e) => field(name)(e.target.value)}
            />
          </FormField>
        ))}
      </fieldset>
      <div className="space-y-3">
        <Button variant="outline" disabled={previewing} onClick={() => void runPreview()}>
          {previewing && <Spinner />}
          {previewing ? t('form.openapi.previewing') : t('form.openapi.preview')}
        </Button>
        {refusal.refusal && (
          <ErrorAlert title={t(refusal.ofDocument ? 'form.openapi.refused' : 'form.openapi.refusedOther')}>
            <p className="break-words">{refusal.refusal}</p>
          </ErrorAlert>
        )}
        {shown && !refusal.refusal && (
          <section aria-label={t('form.openapi.previewTitle')} className="space-y-2">
            <p role="status" className="text-sm">
              {t('form.openapi.previewCount', { count: shown.tools.length, baseUrl: shown.baseUrl })}
            </p>
            <ul
              data-testid="openapi-preview"
              // biome-ignore lint/a11y/noNoninteractiveTabindex: a long list scrolls in its box; keyboard users scroll it too.
              tabIndex={0}
              className="max-h-60 space-y-2 overflow-y-auto rounded-md border border-slate-200 p-2 dark:border-slate-800"
            >
              {shown.tools.map((tool) => (
                <li key={tool.name} className="min-w-0 text-sm">
                  <p className="break-all font-mono font-medium">{tool.name}</p>
                  <p className="break-all font-mono text-xs text-slate-600 dark:text-slate-400">
                    {tool.method} {tool.path}
                  </p>
                  {tool.description && (
                    <p className="line-clamp-2 text-xs text-slate-600 dark:text-slate-400" data-i18n-data>
                      {tool.description}
                    </p>
                  )}
                </li>
              ))}
            </ul>
          </section>
        )}
      </div>
    </>
  );
}
