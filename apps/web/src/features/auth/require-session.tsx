import { Navigate, Outlet, useLocation } from 'react-router';
import { type SignInState, signInPath } from '../../app/return-to';
import { useStoredUserSync } from '../../lib/self';
import { useSession } from '../../lib/session';

function SignedInOutlet() {
  useStoredUserSync();
  return <Outlet />;
}

/** Pages behind the sign-in: without a token, go to /login and remember where the user wanted to be. */
export function RequireSession() {
  const { token } = useSession();
  const location = useLocation();
  if (!token) {
    const state: SignInState = { from: `${location.pathname}${location.search}${location.hash}` };
    return <Navigate to={signInPath} replace state={state} />;
  }
  return <SignedInOutlet />;
}
