import { type OpenApiToolPreview, routes } from '@toolport/contract';
import type { ParseKeys, TFunction } from 'i18next';
import { useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { FormField } from '../../components/form-field';
import { Button } from '../../components/ui/button';
import { Input } from '../../components/ui/input';
import { Label } from '../../components/ui/label';
import { PasswordInput } from '../../components/ui/password-input';
import { RadioGroup, RadioGroupItem } from '../../components/ui/radio-group';
import { Select } from '../../components/ui/select';
import { Spinner } from '../../components/ui/spinner';
import { ApiError, call } from '../../lib/api';
import { failureText, type Refusal, refusalOf } from '../../lib/failure';
import { documentRequestOf, type OpenApiAuth, type OpenApiFields, openApiAuths, readDocumentFile, SECRET_MASK } from './openapi-form';
import type { FieldErrors, ServiceDialogState } from './service-form';

type Form = OpenApiFields & { url: string };

/** The codes of a refused OpenAPI document, or of an address it names (modules/services/openapi.ts). */
const documentCodes = new Set(['openapi_refused', 'address_refused']);

/**
 * The server's refusal of an OpenAPI service's create, save or preview as the dialog's one refusal (decision 0058
 * and its amendment): beside the field the server named when the dialog shows it (`fieldOf`), else a refused
 * document beside the document (its URL, or the file), titled "The OpenAPI document was refused", else in the
 * alert above the form. Null when it was no refusal (no answer, a 403 or 5xx): the caller says so as usual.
 */
export function openApiRefusalOf<F extends Form>(
  err: unknown,
  form: Pick<F, 'source'>,
  fieldOf: (serverField: string) => keyof F | undefined,
  t: TFunction<'services'>,
): Refusal<keyof F> | null {
  const refusal = refusalOf(err, fieldOf);
  if (!refusal || refusal.field !== undefined || !(err instanceof ApiError) || !err.code || !documentCodes.has(err.code)) return refusal;
  const field: keyof Form = form.source === 'file' ? 'fileName' : 'url';
  return { field: field as keyof F, message: t('form.openapi.refusedWith', { message: refusal.message }) };
}

/**
 * The OpenAPI form's field a refusal's field names, in a create, an edit or a preview: the base URL override, and the
 * filter (shown beside the first filter list given, since the filter is refused as a whole). Undefined for the rest.
 */
export function openApiFieldOf(
  field: string,
  form: Pick<OpenApiFields, 'tags' | 'paths' | 'operationIds'>,
): keyof OpenApiFields | undefined {
  if (field === 'base_url') return 'baseUrl';
  if (field !== 'operation_filter') return undefined;
  return (['tags', 'paths', 'operationIds'] as const).find((f) => form[f].trim()) ?? 'tags';
}

interface PreviewResult {
  /** The request it answered, so that a changed form no longer shows it. */
  key: string;
  tools: OpenApiToolPreview[];
  baseUrl: string;
}

interface OpenApiServiceFieldsProps<F extends Form> {
  /** The dialog's form (useDialogForm), its refusal included: the preview's is the same as the save's. */
  state: ServiceDialogState<F>;
  /** The form's own OpenAPI checks (a file, valid URLs, the scheme's fields), run before a preview. */
  validate(form: F): FieldErrors<F>;
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
export function OpenApiServiceFields<F extends Form>({ state, validate, uploadedTitle, editing }: OpenApiServiceFieldsProps<F>) {
  const { t } = useTranslation('services');
  const id = useId();
  const { form, errors, setErrors, edit, refusal, setRefusal, refusedFor } = state;
  const [preview, setPreview] = useState<PreviewResult>();
  const [previewing, setPreviewing] = useState(false);
  const request = documentRequestOf(form);
  const key = JSON.stringify(request);
  const error = (field: keyof Form) => {
    const found: ParseKeys<'services'> | undefined = errors[field as keyof F];
    return found ? t(found) : refusedFor(field as keyof F);
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
    setRefusal(null);
    try {
      const result = await call(routes.services.createCustom, {
        body: { name: '', type: 'openapi', ...request, preview: true },
        notify: false,
      });
      setPreview({ key, tools: result.tools ?? [], baseUrl: result.base_url ?? '' });
    } catch (err) {
      setPreview(undefined);
      // A preview creates nothing: a refusal without a field, or no answer at all, is not "Failed to create".
      const previewFieldOf = (field: string): keyof F | undefined => (field === 'url' ? 'url' : openApiFieldOf(field, form));
      const refused = openApiRefusalOf(err, form, previewFieldOf, t);
      const message = refused?.message ?? failureText(err, t);
      setRefusal(refused?.field !== undefined ? refused : { message, title: t('form.openapi.refusedOther') });
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
  // The other source hides the refused document's field: its refusal goes with it.
  const chooseSource = (value: string) => {
    field('source')(value === 'file' ? 'file' : 'url');
    if (refusal?.field === 'url' || refusal?.field === 'fileName') setRefusal(null);
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
        <RadioGroup value={form.source} onValueChange={chooseSource}>
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
          <FormField key={name} label={t(label)} error={error(name)}>
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
        {shown && !refusal && (
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
