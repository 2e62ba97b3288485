import { useTranslation } from 'react-i18next';
import { Card, CardDescription, CardHeader, CardTitle } from '../../components/ui/card';
import { displayNameOf, useSession } from '../../lib/session';

export function WelcomeCard() {
  const { t } = useTranslation('dashboard');
  const { user } = useSession();
  return (
    <Card className="border-teal-200 bg-teal-50/60 dark:border-teal-900 dark:bg-teal-950/40">
      <CardHeader className="pb-5">
        <CardTitle>{user ? t('welcome.title', { name: displayNameOf(user) }) : t('welcome.titleAnonymous')}</CardTitle>
        <CardDescription>{t('welcome.description')}</CardDescription>
      </CardHeader>
    </Card>
  );
}
