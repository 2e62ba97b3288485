import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import type { InstalledService } from '@toolport/contract';
import { fakeApi, ok, storeSession } from '../../test/fake-api';
import { renderWithProviders } from '../../test/render';
import { ServicesPage } from './services-page';

/** The Services page as an admin with `service` listed, its Edit dialog opened (the edit dialogs' tests). */
export async function openEdit(service: InstalledService, routes: Parameters<typeof fakeApi>[0] = {}) {
  storeSession({ role: 10 });
  const api = fakeApi({ 'GET /api/mcp_market/installed': () => ok([service]), ...routes });
  const user = userEvent.setup();
  await renderWithProviders(<ServicesPage />);
  await user.click(await screen.findByRole('button', { name: `Edit ${service.display_name}` }));
  const dialog = await screen.findByRole('dialog', { name: 'Edit Service' });
  return { api, user, dialog };
}
