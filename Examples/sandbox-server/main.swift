import HeraldSandbox
print("sandbox")
