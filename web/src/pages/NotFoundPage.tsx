import { Link } from "../router.tsx"

export const NotFoundPage = () => (
  <section>
    <h1>Page not found</h1>
    <p>
      Nothing lives at this address. <Link href="/agents">Go to your agents</Link>.
    </p>
  </section>
)
