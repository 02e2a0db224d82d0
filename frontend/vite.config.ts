import { defineConfig } from "vitest/config";
import react from "@vitejs/plugin-react";

// Flask serves the built files under /ui/ (myapp/web.py); `npm run dev` proxies the API to it.
export default defineConfig({
  base: "/ui/",
  plugins: [react()],
  build: {
    outDir: "dist", emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 800,
    // dist/.vite/manifest.json: which chunks the first page loads (tests/test_ui_bundle.py reads it).
    manifest: true,
    // Rolldown's timing hint names Vite's own plugins (vite:css-post) whenever the machine is busy.
    rolldownOptions: { checks: { bundlerTimings: false } },
  },
  server: { proxy: { "/api": "http://127.0.0.1:8080", "/health": "http://127.0.0.1:8080" } },
  test: { include: ["src/**/*.test.ts", "src/**/*.test.tsx"], environment: "node" },
});
