"""A real password hasher that also counts its work, to prove login does the same work for
every email (unknown, OAuth-only or real)."""

from django.contrib.auth.hashers import MD5PasswordHasher


class CountingHasher(MD5PasswordHasher):
    algorithm = "counting_md5"
    calls = 0

    def encode(self, password, salt):
        CountingHasher.calls += 1
        return super().encode(password, salt).replace("md5$", f"{self.algorithm}$", 1)

    def verify(self, password, encoded):
        CountingHasher.calls += 1
        return super().verify(password, encoded.replace(f"{self.algorithm}$", "md5$", 1))

    def decode(self, encoded):
        return super().decode(encoded.replace(f"{self.algorithm}$", "md5$", 1))
