// The auth room's door (decision 0047): what the rest of the console uses of it.
export { RequireSession } from './require-session';
export { authRoutes } from './routes';
export { SignInButton } from './sign-in-button';
export { useLogout } from './use-logout';
