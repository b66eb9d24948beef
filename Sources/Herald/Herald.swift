// The bus lives here.
