import type { RouteDef } from '../route';

export const routes: RouteDef[] = [];
