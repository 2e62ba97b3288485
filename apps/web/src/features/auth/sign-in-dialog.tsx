import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import type { LazyDialogProps } from '../../components/lazy-dialog-button';
import { Dialog, DialogContent, DialogDescription, DialogHeader, DialogTitle } from '../../components/ui/dialog';
import { SignInForm } from './sign-in-form';

/** The sign-in form in the top bar's dialog; success goes to the dashboard (docs/console.md §2.3). */
export default function SignInDialog({ onClose, onCloseAutoFocus }: LazyDialogProps) {
  const { t } = useTranslation(['auth', 'common']);
  const navigate = useNavigate();
  return (
    <Dialog open onOpenChange={(open) => !open && onClose()}>
      <DialogContent className="max-w-sm" onCloseAutoFocus={onCloseAutoFocus}>
        <DialogHeader className="items-center pr-0 text-center">
          <DialogTitle>{t('signInTo', { name: t('common:productName') })}</DialogTitle>
          <DialogDescription>{t('welcomeBack')}</DialogDescription>
        </DialogHeader>
        <SignInForm
          onSignedIn={() => {
            onClose();
            navigate('/');
          }}
        />
      </DialogContent>
    </Dialog>
  );
}
