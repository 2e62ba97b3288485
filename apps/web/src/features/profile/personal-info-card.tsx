import { useMutation, useQueryClient } from '@tanstack/react-query';
import { routes, type SelfUser } from '@toolport/contract';
import { type FormEvent, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '../../components/ui/button';
import { Card, CardContent, CardDescription, CardFooter, CardHeader, CardTitle } from '../../components/ui/card';
import { Input } from '../../components/ui/input';
import { Label } from '../../components/ui/label';
import { Spinner } from '../../components/ui/spinner';
import { call } from '../../lib/api';
import { failureText } from '../../lib/failure';
import { notify } from '../../lib/notify';
import { selfQueryKey } from '../../lib/self';
import { saveUser } from '../../lib/session';

interface InfoFields {
  username: string;
  email: string;
  display_name: string;
}

const fieldsOf = (user: SelfUser): InfoFields => ({ username: user.username, email: user.email, display_name: user.display_name });

/** Username, email and display name with Save and Cancel; password users only (docs/console.md §2.12). */
export function PersonalInfoCard({ user }: { user: SelfUser }) {
  const { t } = useTranslation(['profile', 'common']);
  const queryClient = useQueryClient();
  const id = useId();
  const saved = fieldsOf(user);
  const [fields, setFields] = useState<InfoFields>(saved);
  const changed = (Object.keys(saved) as (keyof InfoFields)[]).some((key) => fields[key] !== saved[key]);

  const update = useMutation({
    mutationFn: (body: InfoFields) => call(routes.users.updateSelf, { body, notify: false }),
    onSuccess: (updated) => {
      queryClient.setQueryData<SelfUser>(selfQueryKey, (old) => (old ? { ...old, ...updated } : old));
      saveUser(updated);
      setFields(fieldsOf({ ...user, ...updated }));
      notify.success(t('info.updated'));
    },
    onError: (err) => notify.error(t('info.updateFailed'), failureText(err, t)),
  });

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    if (changed && fields.username.trim()) update.mutate({ ...fields, username: fields.username.trim() });
  };
  const field = (key: keyof InfoFields, type = 'text', autoComplete?: string) => (
    <div className="space-y-2">
      <Label htmlFor={`${id}-${key}`}>{t(`info.${key}`)}</Label>
      <Input
        id={`${id}-${key}`}
        type={type}
        autoComplete={autoComplete}
        value={fields[key]}
        onChange={(e) => setFields((f) => ({ ...f, [key]: e.target.value }))}
      />
    </div>
  );

  return (
    <Card>
      <form onSubmit={onSubmit} aria-busy={update.isPending}>
        <CardHeader>
          <CardTitle>{t('info.title')}</CardTitle>
          <CardDescription>{t('info.description')}</CardDescription>
        </CardHeader>
        <CardContent className="space-y-4">
          {field('username', 'text', 'username')}
          {field('email', 'email', 'email')}
          {field('display_name', 'text', 'name')}
        </CardContent>
        <CardFooter className="justify-end">
          <Button variant="outline" disabled={!changed || update.isPending} onClick={() => setFields(saved)}>
            {t('common:actions.cancel')}
          </Button>
          <Button type="submit" disabled={!changed || !fields.username.trim() || update.isPending}>
            {update.isPending && <Spinner />}
            {t('common:actions.save')}
          </Button>
        </CardFooter>
      </form>
    </Card>
  );
}
