import { useQueryClient } from '@tanstack/react-query';
import { type PublicUser, routes } from '@toolport/contract';
import type { ParseKeys } from 'i18next';
import { useTranslation } from 'react-i18next';
import { DialogForm } from '../../components/dialog-form';
// The create/edit dialogs of the console share one submission flow (docs/console.md §4) and field layout.
import { FormField } from '../../components/form-field';
import { PhaseOverlay } from '../../components/phase-overlay';
import { Dialog, DialogContent, DialogDescription, DialogHeader, DialogTitle } from '../../components/ui/dialog';
import { Input } from '../../components/ui/input';
import { PasswordInput } from '../../components/ui/password-input';
import { call } from '../../lib/api';
import { showFailure } from '../../lib/failure';
import { notify } from '../../lib/notify';
import { displayNameOf } from '../../lib/session';
import { useDialogForm, useSubmitPhases } from '../../lib/use-submit-phases';
import { refreshUsers } from './use-users';
import {
  createUserRequest,
  editUserRequest,
  emptyUserForm,
  hasErrors,
  MIN_PASSWORD_LENGTH,
  type UserForm,
  userFormOf,
  validateUserForm,
} from './user-rules';

interface UserDialogProps {
  /** The user to edit, or null to add one. */
  user: PublicUser | null;
  open: boolean;
  onOpenChange(open: boolean): void;
  /** Called after a successful save, with the user as the server answered. */
  onSaved?(user: PublicUser): void;
}

/**
 * Add or edit a user (docs/console.md §2.14, §5): username (fixed when editing), display name, email and
 * password (required to add, optional when editing and sent only if entered). Submission runs through the
 * validating, validation-success and submitting phases; the dialog cannot be closed meanwhile.
 */
export function UserDialog({ user, open, onOpenChange, onSaved }: UserDialogProps) {
  const { t } = useTranslation(['users', 'common']);
  const queryClient = useQueryClient();
  const mode = user ? 'edit' : 'create';
  const initial = user ? userFormOf(user) : emptyUserForm;
  const { form, errors, setErrors, edit } = useDialogForm<UserForm, ParseKeys<'users'>>(open, () => initial);
  const { phase, busy, run } = useSubmitPhases();

  const save = async () => {
    try {
      const saved = user
        ? await call(routes.users.edit, { body: editUserRequest(user.id, user.username, form), notify: false })
        : await call(routes.users.create, { body: createUserRequest(form), notify: false });
      notify.success(t(user ? 'toasts.updated' : 'toasts.created'), t('toasts.savedDescription', { name: displayNameOf(saved) }));
      await refreshUsers(queryClient);
      onSaved?.(saved);
      onOpenChange(false);
    } catch (err) {
      showFailure(err, t, { failed: t(user ? 'toasts.updateFailed' : 'toasts.createFailed') });
    }
  };

  const submit = () =>
    run(() => {
      const found = validateUserForm(form, mode);
      setErrors(found);
      return !hasErrors(found);
    }, save);

  const error = (field: keyof UserForm) => {
    const key = errors[field];
    return key && t(key);
  };
  return (
    <Dialog open={open} onOpenChange={(next) => (busy && !next ? undefined : onOpenChange(next))}>
      <DialogContent className="max-w-lg" locked={busy}>
        <DialogHeader>
          <DialogTitle>{t(user ? 'dialog.editTitle' : 'dialog.addTitle')}</DialogTitle>
          <DialogDescription>
            {user ? t('dialog.editDescription', { name: displayNameOf(user) }) : t('dialog.addDescription')}
          </DialogDescription>
        </DialogHeader>
        <DialogForm
          busy={busy}
          onSubmit={submit}
          onCancel={() => onOpenChange(false)}
          cancelLabel={t('common:actions.cancel')}
          submitLabel={t(user ? 'dialog.save' : 'dialog.create')}
        >
          <FormField label={t('form.username')} hint={user ? t('form.usernameFixed') : t('form.usernameHint')} error={error('username')}>
            <Input
              value={form.username}
              readOnly={!!user}
              autoComplete="off"
              spellCheck={false}
              onChange={(e) => edit('username')(e.target.value)}
            />
          </FormField>
          <FormField label={t('form.displayName')} error={error('displayName')}>
            <Input value={form.displayName} autoComplete="off" onChange={(e) => edit('displayName')(e.target.value)} />
          </FormField>
          <FormField label={t('form.email')} error={error('email')}>
            <Input type="email" value={form.email} autoComplete="off" onChange={(e) => edit('email')(e.target.value)} />
          </FormField>
          <FormField
            label={t('form.password')}
            hint={
              user ? t('form.passwordOptional', { count: MIN_PASSWORD_LENGTH }) : t('form.passwordHint', { count: MIN_PASSWORD_LENGTH })
            }
            error={error('password')}
          >
            <PasswordInput value={form.password} autoComplete="new-password" onChange={(e) => edit('password')(e.target.value)} />
          </FormField>
        </DialogForm>
        <PhaseOverlay phase={phase} />
      </DialogContent>
    </Dialog>
  );
}
