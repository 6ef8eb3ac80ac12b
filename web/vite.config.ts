// Vite builds the console into web/dist, which the inspection service serves at `/`
// (src/inspection/console/console.routes.ts). Hashed bundles go to dist/static/ (served as
// immutable). `npm run dev:web` proxies the API to a running `npm start`.
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

const api = process.env.INSPECTION_URL ?? 'http://127.0.0.1:8000';

export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsDir: 'static',
    target: 'es2022',
    sourcemap: false,
    // The 3D viewer (three.js) and the map (Leaflet) are loaded on demand; this limit flags a
    // chunk that grows past what a page should load at once.
    chunkSizeWarningLimit: 700,
  },
  server: { proxy: { '/v1': api } },
});
